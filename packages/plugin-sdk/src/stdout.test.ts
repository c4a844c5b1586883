import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { directWriter, type QueueingStream } from './stdout';

function fakeStream(queued = 0) {
  const chunks: Array<string | Uint8Array> = [];
  const stream: QueueingStream = {
    get writableLength() {
      return queued;
    },
    write(chunk) {
      chunks.push(chunk);
      return true;
    },
  };
  return { stream, chunks, setQueued: (n: number) => (queued = n) };
}

describe('directWriter', () => {
  it('writes straight to the descriptor what it takes at once, the stream untouched', () => {
    const fd: string[] = [];
    const s = fakeStream();
    const write = directWriter(s.stream, 9, ((n: number, text: string) => {
      expect(n).toBe(9);
      fd.push(text);
      return Buffer.byteLength(text);
    }) as never);
    write('{"a":1}\n');
    write('{"b":"é中"}\n');
    expect(fd).toEqual(['{"a":1}\n', '{"b":"é中"}\n']);
    expect(s.chunks).toEqual([]);
  });

  it('hands the stream the bytes a partial write left, also when the cut is inside a character', () => {
    const s = fakeStream();
    const text = 'ab中é\n';
    for (const taken of [1, 3, 4, 6]) {
      s.chunks.length = 0;
      directWriter(s.stream, 1, (() => taken) as never)(text);
      expect(Buffer.concat([Buffer.from(text).subarray(0, taken), s.chunks[0] as Uint8Array]).toString()).toBe(text);
    }
    // as many bytes as the text has characters, yet not all of it
    s.chunks.length = 0;
    const wide = 'é€\n';
    directWriter(s.stream, 1, (() => wide.length) as never)(wide);
    expect(Buffer.concat([Buffer.from(wide).subarray(0, wide.length), s.chunks[0] as Uint8Array]).toString()).toBe(wide);
  });

  it('gives the stream the whole text when the descriptor takes nothing (EAGAIN) or fails', () => {
    for (const code of ['EAGAIN', 'EPIPE']) {
      const s = fakeStream();
      directWriter(s.stream, 1, (() => {
        throw Object.assign(new Error(code), { code });
      }) as never)('{"x":1}\n');
      expect(s.chunks).toEqual(['{"x":1}\n']);
    }
  });

  it('queues behind the stream while it holds anything, so nothing is overtaken', () => {
    const s = fakeStream(10);
    let direct = 0;
    const write = directWriter(s.stream, 1, ((_: number, t: string) => {
      direct++;
      return Buffer.byteLength(t);
    }) as never);
    write('one\n');
    expect(direct).toBe(0);
    expect(s.chunks).toEqual(['one\n']);
    s.setQueued(0);
    write('two\n');
    expect(direct).toBe(1);
  });
});

describe('a worker writing to a pipe its reader drains slowly', () => {
  it('delivers every line whole and in order, its own console.log lines included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fengyu-sdk-stdout-'));
    try {
      const file = join(dir, 'worker.mjs');
      await build({ entryPoints: [join(import.meta.dirname, '../test/fixtures/big-answers.ts')], outfile: file, bundle: true, platform: 'node', format: 'esm', logLevel: 'silent' });
      const child = spawn(process.execPath, [file], { stdio: ['pipe', 'pipe', 'inherit'] });
      const calls = 40;
      const sent: string[] = [];
      for (let id = 1; id <= calls; id++) {
        // answers of 300 KB (more than a pipe or socket buffer holds), some with multi-byte characters, and lines of the plugin's own
        const req = id % 5 === 0 ? { method: 'shout', params: { size: 200_000 } } : { method: 'big', params: { size: 100_000 + id, fill: id % 2 ? 'a中é' : 'xyz' } };
        sent.push(req.method);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, ...req })}\n`);
      }
      const lines: string[] = [];
      let rest = Buffer.alloc(0);
      child.stdout.pause();
      // read in small sips with pauses, so the worker's writes find the pipe full
      while (lines.filter((l) => l.startsWith('{')).length < calls) {
        await new Promise((r) => setTimeout(r, 2));
        const chunk = child.stdout.read(32 * 1024) ?? child.stdout.read();
        if (!chunk) {
          await new Promise((r) => child.stdout.once('readable', r));
          continue;
        }
        rest = Buffer.concat([rest, chunk]);
        let nl = rest.indexOf(10);
        while (nl >= 0) {
          lines.push(rest.subarray(0, nl).toString());
          rest = rest.subarray(nl + 1);
          nl = rest.indexOf(10);
        }
      }
      child.stdin.end();
      const answers = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { id: number; result: { text?: string; ok?: boolean } });
      expect(answers.map((a) => a.id)).toEqual(Array.from({ length: calls }, (_, i) => i + 1));
      for (const a of answers) {
        if (sent[a.id - 1] === 'shout') expect(a.result).toEqual({ ok: true });
        else expect(a.result.text).toBe((a.id % 2 ? 'a中é' : 'xyz').repeat(100_000 + a.id));
      }
      // each plugin line whole, and before its call's answer
      const own = lines.filter((l) => !l.startsWith('{'));
      expect(own).toEqual(Array.from({ length: calls / 5 }, () => 'x'.repeat(200_000)));
      const at = (id: number) => lines.findIndex((l) => l.startsWith(`{"jsonrpc":"2.0","id":${id},`));
      const ownAt = lines.flatMap((l, i) => (l.startsWith('{') ? [] : [i]));
      for (let k = 1; k <= calls / 5; k++) expect(ownAt[k - 1]).toBeLessThan(at(5 * k));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
