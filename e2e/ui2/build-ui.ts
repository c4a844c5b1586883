import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Builds the web UI once into a temporary folder (the tests serve that build, not packages/ui/dist). */
export const ROOT = resolve(import.meta.dirname, '../..');

export function buildUi(): string {
  const out = mkdtempSync(join(tmpdir(), 'fengyu-ui2-dist-'));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', 'packages/ui', '--outDir', out, '--emptyOutDir', '--logLevel', 'error'], { cwd: ROOT, stdio: 'inherit' });
  if (!existsSync(join(out, 'index.html'))) throw new Error('the UI build produced no index.html');
  return out;
}
