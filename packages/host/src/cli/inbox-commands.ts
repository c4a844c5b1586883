import type { InboxItem, InboxPage } from '@fengyu/protocol';
import { call, connectHost } from './host-client';

/**
 * `fengyu inbox` lists what waits for the caller (every page); `fengyu answer <id>` answers one
 * item with exactly one of `--approve`, `--reject [reason]` or `--values JSON` (an input's values),
 * through the same `POST /api/inbox/{id}` as the UI.
 */

function fail(err: unknown): number {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

/** One line per item: id, kind, trigger, workflow, title, and when it expires. */
export function itemLine(i: InboxItem): string {
  const where = i.workflowName ?? i.workflowId ?? '-';
  const expires = i.expiresAt ? ` (expires ${i.expiresAt})` : '';
  return `${i.id}  ${i.kind}  ${i.trigger}  ${where}  ${i.title}${i.stepId ? ` [${i.stepId}]` : ''}${expires}`;
}

export async function inboxCommand(opts: { home?: string; json?: boolean }): Promise<number> {
  try {
    const h = await connectHost(opts.home);
    try {
      const items: InboxItem[] = [];
      let cursor: string | undefined;
      do {
        const page = await call<InboxPage>(h, 'GET', `/api/inbox${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      if (opts.json) process.stdout.write(`${JSON.stringify(items, null, 2)}\n`);
      else if (items.length === 0) process.stdout.write('nothing waits for you\n');
      else for (const i of items) process.stdout.write(`${itemLine(i)}\n`);
      return 0;
    } finally {
      await h.close();
    }
  } catch (err) {
    return fail(err);
  }
}

/** The answer's body from the flags; throws naming the problem (before anything is sent). */
export function answerBody(opts: { approve?: boolean; reject?: string | boolean; values?: string }): Record<string, unknown> {
  const chosen = [opts.approve ? 'approve' : undefined, opts.reject !== undefined && opts.reject !== false ? 'reject' : undefined, opts.values !== undefined ? 'values' : undefined].filter(Boolean);
  if (chosen.length !== 1) throw new Error('give exactly one of --approve, --reject [reason] or --values JSON');
  if (opts.approve) return { decision: 'approve' };
  if (opts.values !== undefined) {
    let values: unknown;
    try {
      values = JSON.parse(opts.values);
    } catch {
      throw new Error('--values must be a JSON object, e.g. --values \'{"discount": 10}\'');
    }
    if (values === null || typeof values !== 'object' || Array.isArray(values)) throw new Error('--values must be a JSON object');
    return { values };
  }
  return typeof opts.reject === 'string' ? { decision: 'reject', reason: opts.reject } : { decision: 'reject' };
}

export async function answerCommand(id: string, opts: { home?: string; approve?: boolean; reject?: string | boolean; values?: string }): Promise<number> {
  let body: Record<string, unknown>;
  try {
    body = answerBody(opts);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  try {
    const h = await connectHost(opts.home);
    try {
      const r = await call<{ runId: string }>(h, 'POST', `/api/inbox/${encodeURIComponent(id)}`, body);
      process.stdout.write(`answered ${id} (run ${r.runId})\n`);
      return 0;
    } finally {
      await h.close();
    }
  } catch (err) {
    return fail(err);
  }
}
