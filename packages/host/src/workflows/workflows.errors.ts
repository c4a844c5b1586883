import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of the workflows domain (messages in protocol/src/i18n/workflows.ts). */
export function registerWorkflowErrors(): void {
  registerErrors({
    workflow_invalid: errorSpecOf(400),
    workflow_not_found: errorSpecOf(404),
    workflow_revision_conflict: errorSpecOf(409),
    workflow_not_published: errorSpecOf(409),
    workflow_version_not_found: errorSpecOf(404),
    workflow_template_not_found: errorSpecOf(404),
    workflow_inputs_invalid: errorSpecOf(400),
    workflow_input_not_found: errorSpecOf(404),
    workflow_input_no_options: errorSpecOf(400),
    workflow_options_tool_unusable: errorSpecOf(409),
    workflow_options_failed: errorSpecOf(502, true),
    workflow_run_failed: errorSpecOf(500),
  });
}
