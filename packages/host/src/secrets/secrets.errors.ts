import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of the secrets domain (messages in protocol/src/i18n/secrets.ts). */
export function registerSecretErrors(): void {
  registerErrors({
    secret_name_invalid: errorSpecOf(400),
    secret_value_invalid: errorSpecOf(400),
    secret_not_found: errorSpecOf(404),
    secrets_key_missing: errorSpecOf(500),
    secrets_key_wrong: errorSpecOf(500),
    secrets_key_invalid: errorSpecOf(500),
  });
}
