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
