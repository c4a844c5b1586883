import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of failure handling in runs (messages in protocol/src/i18n/failure.ts). */
registerErrors({
  step_timeout: errorSpecOf(504, true),
  run_not_retryable: errorSpecOf(409),
  retry_version_invalid: errorSpecOf(400),
  retry_no_current_version: errorSpecOf(409),
  step_failed: errorSpecOf(500),
  error_workflow_unknown: errorSpecOf(400),
  error_workflow_unpublished: errorSpecOf(400),
  error_workflow_no_failed_run: errorSpecOf(400),
  error_workflow_self: errorSpecOf(400),
});
