import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RpcConnection, requestLine } from '../../src/plugins/rpc-connection';
import { resultJsonOf } from '../../src/tools/result-json';

/** A worker's stdin that records each write, and its stdout fed by the test. */
function wire() {
  const writes: string[] = [];
  const input = new Writable({
    write(chunk, _enc, done) {
      writes.push(String(chunk));
      done();
    },
  });
  const output = new PassThrough();
  const answer = (id: number, result: unknown) => output.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
  return { writes, input, output, answer, rpc: new RpcConnection(input, output) };
}

describe('RpcConnection writes', () => {
  it("frames a request as JSON.stringify frames the request object, whatever its params", async () => {
    const dated = { at: new Date(0), toJSON: () => ({ replaced: true }) };
    const cases: unknown[] = [undefined, null, 0, 'a "quoted"\n\u2028 é 𝄞', [1, 'x', null], { a: { b: [undefined, () => 1] }, skip: undefined }, dated, { toJSON: () => undefined }, () => 1];
    for (const [i, params] of cases.entries()) {
      const method = i % 2 ? 'email_accounts_list' : 'odd "method"\u0007';
      expect(requestLine(i + 1, method, params)).toBe(JSON.stringify({ jsonrpc: '2.0', id: i + 1, method, params }));
    }
    const w = wire();
    void w.rpc.request('m', undefined);
    await Promise.resolve();
    expect(w.writes).toEqual(['{"jsonrpc":"2.0","id":1,"method":"m"}\n']);
  });

  it('sends the requests of one tick in one write, before a caller that yields once goes on', async () => {
    const w = wire();
    const calls = [w.rpc.request('m', 1), w.rpc.request('m', 2), w.rpc.request('m', 3)];
    expect(w.writes).toEqual([]);
    await Promise.resolve();
    expect(w.writes).toHaveLength(1);
    expect(w.writes[0]?.split('\n').filter(Boolean).map((l) => JSON.parse(l).params)).toEqual([1, 2, 3]);
    // the next tick starts a new batch
    const later = w.rpc.request('m', 4);
    await Promise.resolve();
    expect(w.writes).toHaveLength(2);
    for (const id of [3, 1, 4, 2]) w.answer(id, id * 10);
    expect(await Promise.all([...calls, later])).toEqual([10, 20, 30, 40]);
  });

  it('writes nothing once closed: requests queued before the close fail with it', async () => {
    const w = wire();
    const first = w.rpc.request('m', 1);
    w.rpc.close('gone');
    await expect(first).rejects.toMatchObject({ failure: { kind: 'closed' } });
    await Promise.resolve();
    expect(w.writes).toEqual([]);
    await expect(w.rpc.request('m', 3)).rejects.toMatchObject({ failure: { kind: 'closed' } });
    expect(w.writes).toEqual([]);
  });
});

describe('RpcConnection answers', () => {
  const head = (id: number | string) => `{"jsonrpc":"2.0","id":${id},"result":`;

  it("keeps a result line's value text, as the worker wrote it, for whoever stores the result", async () => {
    const w = wire();
    const call = w.rpc.request('m', {});
    // bytes JSON.stringify would not write again: an escape, a trailing zero, key order kept
    const text = '{"name":"caf\\u00e9","n":1.50,"list":[{"b":1,"a":2}]}';
    w.output.write(`${head(1)}${text}}\n`);
    const result = await call;
    expect(result).toEqual({ name: 'café', n: 1.5, list: [{ b: 1, a: 2 }] });
    expect(resultJsonOf(result)).toBe(text);
    expect(JSON.parse(resultJsonOf(result) as string)).toEqual(result);
  });

  it('keeps no text for a line not of the exact answer shape, and answers as before', async () => {
    const w = wire();
    const calls = [1, 2, 3, 4, 5].map(() => w.rpc.request('m', {}));
    // a second "result" key: the text after the first is not one value; JSON.parse takes the last
    w.output.write(`${head(1)}{"a":1},"result":{"b":2}}\n`);
    // a CR in the text (it would break an SSE frame) is kept out
    w.output.write(`${head(2)}{"c":\r3}}\n`);
    // keys in another order, and an error answer
    w.output.write('{"id":3,"jsonrpc":"2.0","result":{"d":4}}\n');
    w.output.write(`${JSON.stringify({ jsonrpc: '2.0', id: 4, error: { code: -32000, message: 'no' } })}\n`);
    // an id not written as an integer: not an answer to call 5 (a garbage line: JSON.parse refuses it)
    w.output.write(`${head('05')}{"e":5}}\n`);
    const [one, two, three] = await Promise.all(calls.slice(0, 3));
    expect(one).toEqual({ b: 2 });
    expect(resultJsonOf(one)).toBeUndefined();
    expect(two).toEqual({ c: 3 });
    expect(resultJsonOf(two)).toBeUndefined();
    expect(three).toEqual({ d: 4 });
    expect(resultJsonOf(three)).toBeUndefined();
    await expect(calls[3]).rejects.toMatchObject({ failure: { kind: 'error', message: 'no' } });
    expect(w.rpc.garbageLines).toBe(1);
    expect(w.rpc.inflight).toBe(1);
    w.answer(5, { e: 5 });
    expect(resultJsonOf(await calls[4])).toBe('{"e":5}');
  });

  it('drops an answer for an id it is not waiting for, whatever its shape', async () => {
    const w = wire();
    const call = w.rpc.request('m', {});
    w.output.write(`${head(7)}{"x":1}}\n`);
    w.output.write(`${head(1)}not json}\n`);
    expect(w.rpc.inflight).toBe(1);
    expect(w.rpc.garbageLines).toBe(1);
    w.answer(1, null);
    expect(await call).toBeNull();
  });
});
