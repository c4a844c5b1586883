#!/usr/bin/env node
// The `fengyu` command (what `npm start` runs). It runs the compiled host (dist/host/fengyu.mjs,
// built by scripts/build-host.mjs) while that build still matches the sources; otherwise (no
// build yet, or sources edited since) it loads the TypeScript sources through tsx.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hostStamp } from '../scripts/host-stamp.mjs';

const root = join(import.meta.dirname, '..');
const compiled = join(root, 'dist/host/fengyu.mjs');
const stampFile = join(root, 'dist/host/stamp');
const fresh = existsSync(compiled) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === hostStamp();
if (process.env.FENGYU_REPORT_ENTRY === '1') process.stderr.write(`fengyu entry: ${fresh ? 'compiled' : 'tsx'}\n`);
if (fresh) await import(pathToFileURL(compiled).href);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../packages/host/src/cli/main.ts');
}
