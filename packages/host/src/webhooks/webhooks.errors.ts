import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of the webhooks domain (messages in protocol/src/i18n/webhooks.ts). */
export function registerWebhookErrors(): void {
  registerErrors({
    webhook_trigger_not_found: errorSpecOf(404),
    webhook_secret_invalid: errorSpecOf(401),
    webhook_peer_forbidden: errorSpecOf(403),
    webhook_event_id_invalid: errorSpecOf(400),
    webhook_trigger_paused: errorSpecOf(409, true),
    webhook_event_interrupted: errorSpecOf(409),
    webhook_inputs_unbindable: errorSpecOf(400),
    webhook_defaults_invalid: errorSpecOf(400),
    webhook_body_invalid: errorSpecOf(400),
    webhook_cursor_invalid: errorSpecOf(400),
  });
}
