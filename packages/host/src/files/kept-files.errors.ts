import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of files carried by tasks and kept by schedules (messages in protocol/src/i18n/plugins.ts). */
registerErrors({
  input_file_missing: errorSpecOf(400),
});
