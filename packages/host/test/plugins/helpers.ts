import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packPlugin } from '@fengyu/plugin-sdk/pack';

export const FIXTURE = join(import.meta.dirname, 'fixtures/test-plugin');

export function tempDir(prefix = 'fengyu-plugins-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Packs the probe fixture (optionally with manifest overrides) into a fresh .fyp. */
export async function packProbe(overrides: Record<string, unknown> = {}): Promise<string> {
  const dir = tempDir('fengyu-probe-src-');
  cpSync(FIXTURE, dir, { recursive: true });
  const manifest = { ...JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')), ...overrides };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  const { file } = await packPlugin(dir, join(dir, 'out.fyp'));
  return file;
}

/** A zip built entry by entry; `rename` patches names after building (for zip-slip cases yazl refuses to write). */
export async function zipEntries(entries: Array<{ name: string; data: string | Buffer; mode?: number }>, rename: Record<string, string> = {}): Promise<Buffer> {
  const yazl = (await import('yazl')).default;
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, { mode: e.mode ?? 0o100644, mtime: new Date(0) });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream as AsyncIterable<Buffer>) chunks.push(c);
  const buf = Buffer.concat(chunks);
  for (const [from, to] of Object.entries(rename)) {
    if (from.length !== to.length) throw new Error('rename must keep the length');
    let at = buf.indexOf(from);
    while (at >= 0) {
      buf.write(to, at, 'latin1');
      at = buf.indexOf(from, at + 1);
    }
  }
  return buf;
}

export const MINIMAL_MANIFEST = {
  id: 'test.fengyu.tiny',
  name: 'Tiny',
  version: '1.0.0',
  worker: 'worker.js',
  rpc: { methods: { noop: { inputSchema: { type: 'object' } } } },
  aiTools: [{ name: 'tiny_noop', description: 'noop', method: 'noop', effect: 'read' }],
};
