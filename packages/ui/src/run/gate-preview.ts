/**
 * Who gets what, shown on an approval gate before anything is sent: for a send step (arguments
 * `{confirmationId}`) the preview the prepare step returned for that id (one line per message:
 * recipients, subject, attachment); for a prepare step (arguments with `recipients` and
 * `subject`) its resolved recipients, subject and files. Undefined for any other step. Pure.
 */

export interface MailLine {
  to: string[];
  cc: string[];
  subject: string;
  attachment?: string;
}

export interface MailPreview {
  lines: MailLine[];
  /** Messages beyond the lines shown. */
  more: number;
}

const MAX_LINES = 20;

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const strings = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.flatMap(strings)
    : typeof v === 'string'
      ? v
          .split(/[,;]/)
          .map((s) => s.trim())
          .filter(Boolean)
      : [];

function fromBatchResult(result: unknown, id: string): MailLine[] | undefined {
  const r = obj(result);
  if (!r || obj(r.confirmation)?.confirmationId !== id || !Array.isArray(r.preview)) return undefined;
  return r.preview.map((p) => {
    const m = obj(p) ?? {};
    const att = obj(m.attachment);
    return { to: strings(m.to), cc: strings(m.cc), subject: String(m.subject ?? ''), ...(typeof att?.name === 'string' ? { attachment: att.name } : {}) };
  });
}

export function mailPreview(args: unknown, steps: ReadonlyArray<{ result?: unknown }>): MailPreview | undefined {
  const a = obj(args);
  if (!a) return undefined;
  let lines: MailLine[] | undefined;
  if (typeof a.confirmationId === 'string') {
    for (const s of steps) {
      lines = fromBatchResult(s.result, a.confirmationId);
      if (lines) break;
    }
  } else if (a.recipients !== undefined && typeof a.subject === 'string') {
    const files = Array.isArray(a.files) ? a.files : [];
    const names = files.map((f) => (typeof f === 'string' ? f.split(/[\\/]/).pop() : String(obj(f)?.name ?? ''))).filter((n): n is string => !!n);
    const to = strings(a.recipients);
    lines = names.length > 0 ? names.map((n) => ({ to, cc: [], subject: a.subject as string, attachment: n })) : [{ to, cc: [], subject: a.subject as string }];
  }
  if (!lines) return undefined;
  return { lines: lines.slice(0, MAX_LINES), more: Math.max(0, lines.length - MAX_LINES) };
}
