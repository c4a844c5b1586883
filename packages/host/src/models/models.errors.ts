import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of the models domain (messages in protocol/src/i18n/models.ts). */
export function registerModelErrors(): void {
  registerErrors({
    unknown_backend: errorSpecOf(400),
    backend_key_missing: errorSpecOf(400),
    backend_key_env_forbidden: errorSpecOf(403),
    backend_key_env_reserved: errorSpecOf(400),
    model_failed: errorSpecOf(502, true),
    model_cancelled: errorSpecOf(499),
    conversation_not_found: errorSpecOf(404),
    chat_no_pending_gate: errorSpecOf(409),
    chat_busy: errorSpecOf(409, true),
    memory_full: errorSpecOf(409),
    memory_not_found: errorSpecOf(404),
    memory_cursor_invalid: errorSpecOf(400),
  });
}
