import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { RpcConnection } from '../../src/plugins/rpc-connection';

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
  it('writes a lone request at once, before the caller goes on', async () => {
    const w = wire();
    const answered = w.rpc.request('m', { a: 1 });
    // nothing awaited yet: the worker already has the request
    expect(w.writes).toEqual(['{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}\n']);
    w.answer(1, { ok: true });
    expect(await answered).toEqual({ ok: true });
  });

  it('sends the requests that follow in the same tick together, in order, and answers each', async () => {
    const w = wire();
    const calls = [w.rpc.request('m', 1), w.rpc.request('m', 2), w.rpc.request('m', 3)];
    expect(w.writes).toHaveLength(1);
    await Promise.resolve();
    expect(w.writes).toHaveLength(2);
    expect(w.writes[1]?.split('\n').filter(Boolean).map((l) => JSON.parse(l).params)).toEqual([2, 3]);
    // the next tick starts a new batch with a write at once
    const later = w.rpc.request('m', 4);
    expect(w.writes).toHaveLength(3);
    for (const id of [3, 1, 4, 2]) w.answer(id, id * 10);
    expect(await Promise.all([...calls, later])).toEqual([10, 20, 30, 40]);
  });

  it('writes nothing once closed, and a message queued before the close is dropped with its call', async () => {
    const w = wire();
    const first = w.rpc.request('m', 1);
    const second = w.rpc.request('m', 2);
    w.rpc.close('gone');
    await expect(first).rejects.toMatchObject({ failure: { kind: 'closed' } });
    await expect(second).rejects.toMatchObject({ failure: { kind: 'closed' } });
    await Promise.resolve();
    expect(w.writes).toHaveLength(1);
    await expect(w.rpc.request('m', 3)).rejects.toMatchObject({ failure: { kind: 'closed' } });
    expect(w.writes).toHaveLength(1);
  });
});
