import { hostErrorText as readBack, pickLocale } from '@fengyu/protocol';

/**
 * A task's or delivery's recorded error in the UI's language: the error table's own sentence,
 * with the parameters the host wrote it with; a tool's own words as written (protocol `hostErrorText`).
 */
export function hostErrorText(err: { code: string; message: string }, locale: string): string {
  return readBack(err, pickLocale(locale));
}

/** Splits a host message into text and the permission-mode identifiers it names (shown as code). */
export function modeIdParts(text: string): Array<{ text: string; code: boolean }> {
  const out: Array<{ text: string; code: boolean }> = [];
  const re = /approve-for-me|full-access|(?<![\w-])ask(?![\w-])/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    const at = m.index ?? 0;
    if (at > last) out.push({ text: text.slice(last, at), code: false });
    out.push({ text: m[0], code: true });
    last = at + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), code: false });
  return out;
}
