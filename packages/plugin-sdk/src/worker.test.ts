import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createWorker, ToolError, z } from './index';

function harness() {
  const input = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const writes: string[] = [];
  let waiters: Array<() => void> = [];
  const worker = createWorker()
    .method('add', { description: 'adds', input: z.object({ a: z.number(), b: z.number() }), output: z.object({ sum: z.number() }) }, (i, ctx) => {
      ctx.progress({ current: 1, total: 1 });
      return { sum: i.a + i.b };
    })
    .method('boom', { description: 'fails', input: z.object({}), output: z.object({}) }, () => {
      throw new ToolError('exploded', { why: 'test' });
    })
    .method('wait', { description: 'waits for cancel', input: z.object({}), output: z.object({}) }, (_i, ctx) =>
      new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
    )
    .method('nothing', { description: 'answers no value', input: z.object({}), output: z.undefined() }, () => undefined)
    .method('later', { description: 'answers after a promise', input: z.object({}), output: z.object({ ok: z.boolean() }) }, async () => ({ ok: true }))
    .method('bad_output', { description: 'lies', input: z.object({}), output: z.object({ n: z.number() }) }, () => ({ n: 'x' }) as never);
  worker.start({
    input,
    argv: [],
    env: { FENGYU_PLUGIN_ROOT: '/root', FENGYU_PLUGIN_DATA: '/data' },
    exit: () => {},
    write: (chunk) => {
      writes.push(chunk);
      for (const line of chunk.split('\n')) {
        if (!line) continue;
        lines.push(JSON.parse(line));
        raw.push(line);
      }
      for (const w of waiters) w();
      waiters = [];
    },
  });
  const next = async (pred: (m: Record<string, unknown>) => boolean) => {
    for (;;) {
      const found = lines.find(pred);
      if (found) return found;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const send = (m: unknown) => input.write(typeof m === 'string' ? m : `${JSON.stringify(m)}\n`);
  return { worker, send, next, lines, raw, writes, input };
}

describe('worker runtime', () => {
  it('answers typed calls, progress and validation errors', async () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 1, method: 'add', params: { a: 2, b: 3 } });
    expect((await h.next((m) => m.id === 1)).result).toEqual({ sum: 5 });
    expect(h.lines.some((m) => m.method === '$/progress')).toBe(true);
    h.send({ jsonrpc: '2.0', id: 2, method: 'add', params: { a: 'x' } });
    expect(((await h.next((m) => m.id === 2)).error as { code: number }).code).toBe(-32602);
    h.send({ jsonrpc: '2.0', id: 3, method: 'nope' });
    expect(((await h.next((m) => m.id === 3)).error as { code: number }).code).toBe(-32601);
    h.send('not json\n');
    expect(((await h.next((m) => m.id === null)).error as { code: number }).code).toBe(-32700);
    h.send({ jsonrpc: '2.0', id: 4, method: 'boom' });
    expect((await h.next((m) => m.id === 4)).error).toMatchObject({ message: 'exploded', data: { why: 'test' } });
    h.send({ jsonrpc: '2.0', id: 5, method: 'bad_output' });
    expect(((await h.next((m) => m.id === 5)).error as { code: number }).code).toBe(-32603);
  });

  it('writes each answer as one JSON-RPC line with its fields in order, for numeric and string ids', async () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 11, method: 'add', params: { a: 1, b: 1 } });
    h.send({ jsonrpc: '2.0', id: 'x"1', method: 'add', params: { a: 2, b: 2 } });
    h.send({ jsonrpc: '2.0', id: 12, method: 'nothing', params: {} });
    await h.next((m) => m.id === 12);
    const answers = h.raw.filter((l) => !l.includes('$/progress'));
    expect(answers).toEqual(['{"jsonrpc":"2.0","id":11,"result":{"sum":2}}', '{"jsonrpc":"2.0","id":"x\\"1","result":{"sum":4}}', '{"jsonrpc":"2.0","id":12}']);
  });

  it('writes any id of a result line as JSON.stringify writes it (odd numbers included)', async () => {
    const h = harness();
    h.send('{"jsonrpc":"2.0","id":1e400,"method":"add","params":{"a":1,"b":0}}\n');
    h.send('{"jsonrpc":"2.0","id":-0,"method":"add","params":{"a":2,"b":0}}\n');
    h.send('{"jsonrpc":"2.0","id":1.5,"method":"add","params":{"a":3,"b":0}}\n');
    h.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"add","params":{"a":4,"b":0}}\n');
    await h.next((m) => (m.result as { sum?: number } | undefined)?.sum === 4);
    const answers = h.raw.filter((l) => l.includes('"result"'));
    expect(answers).toEqual([
      '{"jsonrpc":"2.0","id":null,"result":{"sum":1}}',
      '{"jsonrpc":"2.0","id":0,"result":{"sum":2}}',
      '{"jsonrpc":"2.0","id":1.5,"result":{"sum":3}}',
      '{"jsonrpc":"2.0","id":9007199254740992,"result":{"sum":4}}',
    ]);
  });

  it('reads lines split across chunks, and answers the synchronous calls of one chunk in one write', async () => {
    const h = harness();
    const one = JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'nothing', params: {} });
    const two = JSON.stringify({ jsonrpc: '2.0', id: 22, method: 'nothing', params: {} });
    const three = JSON.stringify({ jsonrpc: '2.0', id: 23, method: 'nothing', params: {} });
    const seen: number[] = [];
    h.input.on('data', () => seen.push(h.writes.length));
    h.send(`${one.slice(0, 10)}`);
    h.send(`${one.slice(10)}\n${two}\n\n${three.slice(0, 5)}`);
    await h.next((m) => m.id === 22);
    // written as each chunk was handled (a listener after the worker's saw it), not in a later promise job
    expect(seen).toEqual([0, 1]);
    expect(h.writes).toEqual(['{"jsonrpc":"2.0","id":21}\n{"jsonrpc":"2.0","id":22}\n']);
    h.send(`${three.slice(5)}\n`);
    expect(await h.next((m) => m.id === 23)).toEqual({ jsonrpc: '2.0', id: 23 });
    // an asynchronous handler's answer still leaves (in the promise job queued for it)
    h.send({ jsonrpc: '2.0', id: 24, method: 'later', params: {} });
    expect((await h.next((m) => m.id === 24)).result).toEqual({ ok: true });
  });

  it('aborts the handler on $/cancelRequest', async () => {
    const h = harness();
    h.send({ jsonrpc: '2.0', id: 7, method: 'wait' });
    h.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 7 } });
    expect(((await h.next((m) => m.id === 7)).error as { code: number }).code).toBe(-32800);
  });

  it('describes its methods as JSON Schema', () => {
    const d = harness().worker.describe();
    expect(Object.keys(d.methods)).toEqual(['add', 'boom', 'wait', 'nothing', 'later', 'bad_output']);
    expect(d.methods.add?.inputSchema).toMatchObject({ type: 'object', required: ['a', 'b'] });
  });
});
