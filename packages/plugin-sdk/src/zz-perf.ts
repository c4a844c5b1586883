import { PassThrough } from 'node:stream';
import { createWorker, z } from './index';
const input = new PassThrough();
let waiter: (() => void) | undefined; let got = 0;
createWorker().method('noop', { description: 'n', input: z.object({}), output: z.object({}) }, () => ({})).start({ input, argv: [], env: {}, exit: () => {}, write: (c) => { got += c.split('\n').length - 1; if (got >= 8 && waiter) { got = 0; const w = waiter; waiter = undefined; w(); } } });
const line = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'noop', params: {} }) + '\n';
const batch = line.repeat(8);
for (const round of [1, 2]) {
  const R = 5000; const t = performance.now();
  for (let i = 0; i < R; i++) { const p = new Promise<void>((r) => (waiter = r)); input.write(batch); await p; }
  console.log(round, 'µs per call', ((performance.now() - t) * 1000 / (R * 8)).toFixed(2));
}
// baseline: same harness with a trivial echo
const input2 = new PassThrough(); input2.setEncoding('utf8'); let buf = '';
input2.on('data', (c: string) => { buf += c; let nl; let k = 0; while ((nl = buf.indexOf('\n')) >= 0) { const m = JSON.parse(buf.slice(0, nl)); buf = buf.slice(nl + 1); JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }); k++; } got += k; if (got >= 8 && waiter) { got = 0; const w = waiter; waiter = undefined; w(); } });
{ const R = 5000; const t = performance.now();
  for (let i = 0; i < R; i++) { const p = new Promise<void>((r) => (waiter = r)); input2.write(batch); await p; }
  console.log('echo baseline µs per call', ((performance.now() - t) * 1000 / (R * 8)).toFixed(2)); }
