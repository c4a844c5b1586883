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
