import { isFengYuError, localize } from '@fengyu/protocol';

/**
 * A task body's failure as the task records it: the stable code, and its message written out
 * from the error table in English with the error's parameters (a `FengYuError`'s own message is
 * its bare code). The UI reads such a message back into its own language (protocol `hostErrorText`).
 */
export function taskFailure(err: unknown): { code: string; message: string } {
  if (isFengYuError(err)) return { code: err.code, message: localize(err.code, err.params, 'en') };
  const code = (err as { code?: unknown } | null)?.code;
  return { code: typeof code === 'string' ? code : 'internal', message: err instanceof Error ? err.message : String(err) };
}
