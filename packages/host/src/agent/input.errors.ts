import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Input steps' answer errors (docs/workflows.md): values that do not fit the form, and no input pending. */
registerErrors({
  input_values_invalid: errorSpecOf(400),
  no_pending_input: errorSpecOf(409),
});
