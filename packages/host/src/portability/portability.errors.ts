import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of workflow export, import and diffs (messages in protocol/src/i18n/portability.ts). */
export function registerPortabilityErrors(): void {
  registerErrors({
    import_invalid: errorSpecOf(400),
    import_format_unsupported: errorSpecOf(400),
    workflow_diff_side_invalid: errorSpecOf(400),
  });
}
