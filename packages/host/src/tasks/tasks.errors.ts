import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of the background tasks domain (messages in protocol/src/i18n/tasks.ts). */
export function registerTaskErrors(): void {
  registerErrors({
    task_not_found: errorSpecOf(404),
    task_field_invalid: errorSpecOf(400),
    task_host_stopping: errorSpecOf(503, true),
    task_interrupted: errorSpecOf(500),
    task_cancelled: errorSpecOf(499),
  });
}
