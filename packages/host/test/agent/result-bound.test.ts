import { stableHash } from '@fengyu/protocol';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESULT_BYTES } from '../../src/agent/step-runner';
import type { Tool } from '../../src/tools/tool';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * A step's result is bounded in UTF-8 bytes of its JSON text (`MAX_RESULT_BYTES`), not in
 * characters: a text of fewer characters than the bound whose UTF-8 form exceeds it fails the
 * step, and one exactly at the bound passes.
 */

let t: TestHost;
beforeAll(async () => {
  const schema = { type: 'object', properties: { char: { type: 'string' }, count: { type: 'integer' } } };
  const big: Tool = {
    name: 'big_read',
    description: 'answers a string of `count` times `char`',
    inputSchema: schema,
    effect: 'read',
    source: 'builtin',
    id: 'builtin:big_read',
    schemaRevision: stableHash(schema),
    idempotent: true,
    available: true,
    invoke: async (args) => String(args.char).repeat(Number(args.count)),
  };
  t = await startTestHost({ beforeDomains: (core) => core.catalog.register({ kind: 'builtin', list: async () => [big] }) });
});
afterAll(async () => t.close());

describe('the bound of a step result', () => {
  it('counts UTF-8 bytes of the JSON text (two quotes included), at and just past the bound', async () => {
    const euro = Math.floor((MAX_RESULT_BYTES - 2) / 3); // '€' is 3 bytes in UTF-8
    const cases: Record<string, { char: string; count: number; ok: boolean }> = {
      ascii_at: { char: 'a', count: MAX_RESULT_BYTES - 2, ok: true },
      ascii_past: { char: 'a', count: MAX_RESULT_BYTES - 1, ok: false },
      euro_under: { char: '€', count: euro, ok: true },
      // fewer characters than a third of the bound plus one: only its bytes exceed it
      euro_past: { char: '€', count: euro + 1, ok: false },
    };
    expect(3 * (euro + 1) + 2).toBeGreaterThan(MAX_RESULT_BYTES);
    expect(euro + 3).toBeLessThan(MAX_RESULT_BYTES / 3 + 2);
    for (const [id, c] of Object.entries(cases)) {
      // a run per case: a failed step ends its run
      const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id, tool: 'big_read', arguments: { char: c.char, count: c.count } }] }, config: auto });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const runId = res.body.runId as string;
      expect((await t.stream(runId)).at(-1)?.type, id).toBe(c.ok ? 'complete' : 'error');
      const row = (await sql<{ status: string; error: string | null; bytes: number | null }>`select status, error, length(cast(result as blob)) as bytes from step_executions where run_id = ${runId} and step_id = ${id}`.execute(t.host.ctx.db)).rows[0];
      expect(row?.status, id).toBe(c.ok ? 'done' : 'failed');
      if (c.ok) expect(row?.bytes, id).toBe(c.char === 'a' ? c.count + 2 : 3 * c.count + 2);
      else expect(row?.error, id).toBe(`result of "big_read" exceeds ${MAX_RESULT_BYTES} bytes`);
    }
  });
});
