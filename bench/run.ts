import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * `npm run bench`: runs every `bench/*.bench.ts` (each exports `run(): Promise<string[]>`) and
 * prints their tables: medians, p99s and ratios. `npm run bench -- runner` runs only matching files.
 */
const filter = process.argv[2];
const dir = import.meta.dirname;
const files = readdirSync(dir).filter((f) => f.endsWith('.bench.ts') && (!filter || f.includes(filter))).sort();
let failed = false;
for (const file of files) {
  process.stdout.write(`\n# ${file}\n`);
  try {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { run: () => Promise<string[]> };
    for (const line of await mod.run()) process.stdout.write(`${line}\n`);
  } catch (err) {
    failed = true;
    process.stdout.write(`FAILED: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
}
process.exit(failed ? 1 : 0);
