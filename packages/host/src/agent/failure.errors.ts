import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of failure handling in runs (messages in protocol/src/i18n/failure.ts). */
registerErrors({
  step_timeout: errorSpecOf(504, true),
});
