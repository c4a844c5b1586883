import { stableHash } from '@fengyu/protocol';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetResultJson } from '../../src/tools/result-json';
import type { Tool } from '../../src/tools/tool';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * A result whose JSON text the host parsed it from (a plugin worker's answer) is stored and
 * streamed as that text, not serialized again: the step's row, its `tool` result and
 * `step_complete` events hold the text as it came, and later steps use the parsed value.
 */

// bytes a second JSON.stringify would not write: spaces, an escape, a trailing zero
const TEXT = '{ "name": "caf\\u00e9", "n": 1.50, "list": [2, 1] }';

let t: TestHost;
beforeAll(async () => {
  const parsed: Tool = {
    name: 'parsed_read',
    description: 'answers a value parsed from known JSON text',
    inputSchema: { type: 'object' },
    effect: 'read',
    source: 'builtin',
    id: 'builtin:parsed_read',
    schemaRevision: stableHash({ type: 'object' }),
    idempotent: true,
    available: true,
    invoke: async () => {
      const value = JSON.parse(TEXT);
      presetResultJson(value, TEXT);
      return value;
    },
  };
  t = await startTestHost({ beforeDomains: (core) => core.catalog.register({ kind: 'builtin', list: async () => [parsed] }) });
});
afterAll(async () => t.close());

describe('a result parsed from known text', () => {
  it('is stored and streamed as that text; the next step reads the parsed value', async () => {
    const res = await t.api('POST', '/api/agent/run', {
      workflow: { steps: [{ id: 'p', tool: 'parsed_read' }, { id: 'e', tool: 'echo', dependsOn: ['p'], arguments: { value: '{{node.p.result.name}}' } }] },
      config: auto,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const runId = res.body.runId as string;
    const streamed = await t.stream(runId);
    expect(streamed.at(-1)?.type).toBe('complete');
    const db = t.host.ctx.db;
    const row = (await sql<{ result: string }>`select result from step_executions where run_id = ${runId} and step_id = 'p'`.execute(db)).rows[0];
    expect(row?.result).toBe(TEXT);
    const stored = (await sql<{ type: string; data: string }>`select type, data from run_events where run_id = ${runId} order by seq`.execute(db)).rows;
    const ends = stored.filter((e) => (e.type === 'step_complete' || (e.type === 'tool' && e.data.includes('"phase":"result"'))) && e.data.includes('"stepId":"p"'));
    expect(ends).toHaveLength(2);
    for (const e of ends) expect(e.data.endsWith(`"result":${TEXT}}`)).toBe(true);
    const complete = streamed.find((e) => e.type === 'step_complete' && e.data.stepId === 'p');
    expect(complete?.data.result).toEqual({ name: 'café', n: 1.5, list: [2, 1] });
    const echoed = streamed.find((e) => e.type === 'step_complete' && e.data.stepId === 'e');
    expect(echoed?.data.result.echoed).toBe('café');
  });

  it('a result the host serializes: the payloads of the events carrying it and their frames are byte for byte the events\' JSON', async () => {
    const value = { text: 'a "quoted" line\nand café', n: 2.5, none: null, list: [1, 'x'] };
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 's', tool: 'echo', arguments: { value } }] }, config: auto });
    expect(res.status).toBe(200);
    const runId = res.body.runId as string;
    const raw = await fetch(`${t.host.url}/api/agent/stream?runId=${runId}`, { headers: { 'x-fengyu-token': t.host.token, accept: 'text/event-stream' } });
    const text = await raw.text();
    // the stream's own headers
    expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(raw.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(raw.headers.get('x-accel-buffering')).toBe('no');
    const db = t.host.ctx.db;
    const stored = (await sql<{ seq: number; type: string; data: string; ts: string }>`select seq, type, data, ts from run_events where run_id = ${runId} order by seq`.execute(db)).rows;
    const result = { echoed: value, args: { value } };
    const toolResult = stored.find((e) => e.type === 'tool' && e.data.includes('"phase":"result"'));
    expect(toolResult?.data).toBe(JSON.stringify({ phase: 'result', stepId: 's', name: 'echo', result }));
    const complete = stored.find((e) => e.type === 'step_complete');
    const durationMs = JSON.parse(complete?.data ?? '{}').durationMs;
    expect(complete?.data).toBe(JSON.stringify({ stepId: 's', index: 1, status: 'done', attempts: 1, durationMs, result }));
    // each event's frame is the JSON of { type, ...payload, runId, seq, ts }
    for (const e of [toolResult, complete]) {
      if (!e) throw new Error('missing event');
      const frame = `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ type: e.type, ...JSON.parse(e.data), runId, seq: e.seq, ts: e.ts })}\n\n`;
      expect(text).toContain(frame);
    }
  });
});
