/**
 * "Where is my output": the files a finished run's steps report having written — any object in a
 * step's result with a string `name` and an absolute `path` (the parts a Split wrote, a filtered
 * workbook) — and the messages written to the local outbox (`written to <file>.eml`). Each file
 * once, by step, at most 100. Pure; what may be downloaded is decided by the host.
 */

export interface ProducedFile {
  stepId: string;
  stepTitle: string;
  name: string;
  path: string;
}

const MAX = 100;
const OUTBOX = /written to (\S+\.eml)\b/g;

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
const baseName = (p: string) => p.split(/[\\/]/).pop() ?? p;

export function producedFiles(steps: ReadonlyArray<{ id: string; title?: string; status?: string; result?: unknown }>): { files: ProducedFile[]; outbox: ProducedFile[] } {
  const files: ProducedFile[] = [];
  const outbox: ProducedFile[] = [];
  const seen = new Set<string>();
  for (const s of steps) {
    if (s.status !== undefined && s.status !== 'done') continue;
    const at = { stepId: s.id, stepTitle: s.title || s.id };
    walk(s.result, (o) => {
      if (typeof o.path === 'string' && typeof o.name === 'string' && isAbsolute(o.path) && !seen.has(o.path) && files.length < MAX) {
        seen.add(o.path);
        files.push({ ...at, name: o.name, path: o.path });
      }
      for (const v of Object.values(o)) {
        if (typeof v !== 'string') continue;
        for (const m of v.matchAll(OUTBOX)) {
          const path = m[1] as string;
          if (!seen.has(path) && outbox.length < MAX) {
            seen.add(path);
            outbox.push({ ...at, name: baseName(path), path });
          }
        }
      }
    });
  }
  return { files, outbox };
}
