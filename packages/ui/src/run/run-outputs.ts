/**
 * "Where is my output": the files a finished run's steps report having written — any object in a
 * step's result with a string `name` and an absolute `path` (the parts a Split wrote, a filtered
 * workbook), each once — and the messages a send step reports (objects with `messageId`,
 * `subject`, `to` and `status`: who got what, and whether it went). By step, at most 100 each.
 * Pure; what may be downloaded is decided by the host.
 */

export interface ProducedFile {
  stepId: string;
  stepTitle: string;
  name: string;
  path: string;
}

export interface SentMessage {
  stepId: string;
  stepTitle: string;
  to: string[];
  subject: string;
  status: string;
  /** The message as a file (the local outbox's `.eml`), when the send step reports one. */
  file?: { name: string; path: string };
}

const MAX = 100;

function walk(value: unknown, visit: (o: Record<string, unknown>) => void, depth = 0): void {
  if (depth > 8 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) walk(v, visit, depth + 1);
    return;
  }
  const o = value as Record<string, unknown>;
  visit(o);
  for (const v of Object.values(o)) walk(v, visit, depth + 1);
}

const isAbsolute = (p: string) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p);

export function producedFiles(steps: ReadonlyArray<{ id: string; title?: string; status?: string; result?: unknown }>): { files: ProducedFile[]; messages: SentMessage[] } {
  const files: ProducedFile[] = [];
  const messages: SentMessage[] = [];
  const seen = new Set<string>();
  for (const s of steps) {
    if (s.status !== undefined && s.status !== 'done') continue;
    const at = { stepId: s.id, stepTitle: s.title || s.id };
    walk(s.result, (o) => {
      if (typeof o.path === 'string' && typeof o.name === 'string' && isAbsolute(o.path) && !seen.has(o.path) && files.length < MAX) {
        seen.add(o.path);
        files.push({ ...at, name: o.name, path: o.path });
      }
      if (typeof o.messageId === 'string' && typeof o.subject === 'string' && typeof o.status === 'string' && Array.isArray(o.to) && messages.length < MAX) {
        const f = o.file as { name?: unknown; path?: unknown } | undefined;
        const file = f && typeof f.name === 'string' && typeof f.path === 'string' && isAbsolute(f.path) ? { name: f.name, path: f.path } : undefined;
        messages.push({ ...at, to: o.to.filter((x): x is string => typeof x === 'string'), subject: o.subject, status: o.status, ...(file ? { file } : {}) });
      }
    });
  }
  return { files, messages };
}
