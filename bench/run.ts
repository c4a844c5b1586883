import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadAverage } from './real-host';

/**
 * `npm run bench`: runs every `bench/*.bench.ts` (each exports `run()` returning printable lines,
 * or `{ lines, ratios }`) and prints their tables: medians, p99s and ratios to floors measured in
 * the same run. `npm run bench -- runner` runs only matching files.
 *
 * `npm run bench -- --quick`: the CI subset — the real-host figures with fewer repetitions — and
 * fails when a ratio is past the regression limit recorded in `bench/goals.json`. Only ratios are
 * checked, never absolute times (the machine changes; a ratio to a floor measured alongside does not).
 */
interface Goal {
  /** which way is better */
  better: 'lower' | 'higher';
  /** the regression limit `--quick` enforces */
  limit: number;
  /** the issue's goal, printed beside it */
  target: number;
  what: string;
}
type Result = string[] | { lines: string[]; ratios: Record<string, number> };

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const filter = args.find((a) => !a.startsWith('--'));
const dir = import.meta.dirname;
const files = quick ? ['host.bench.ts'] : readdirSync(dir).filter((f) => f.endsWith('.bench.ts') && (!filter || f.includes(filter))).sort();
const goals = JSON.parse(readFileSync(join(dir, 'goals.json'), 'utf8')) as Record<string, Goal>;
let failed = false;
process.stdout.write(`${new Date().toISOString()}  ${loadAverage()}\n`);
for (const file of files) {
  process.stdout.write(`\n# ${file}\n`);
  try {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { run: (opts: { quick: boolean }) => Promise<Result> };
    const result = await mod.run({ quick });
    const lines = Array.isArray(result) ? result : result.lines;
    for (const line of lines) process.stdout.write(`${line}\n`);
    if (!Array.isArray(result)) {
      process.stdout.write('\n| ratio | measured | regression limit | goal | |\n|---|---|---|---|---|\n');
      for (const [name, value] of Object.entries(result.ratios)) {
        const g = goals[name];
        if (!g) {
          process.stdout.write(`| ${name} | ${value.toFixed(3)} | — | — | no recorded goal |\n`);
          continue;
        }
        const bad = !Number.isFinite(value) || (g.better === 'lower' ? value > g.limit : value < g.limit);
        const sign = g.better === 'lower' ? '≤' : '≥';
        const meets = g.better === 'lower' ? value <= g.target : value >= g.target;
        process.stdout.write(`| ${name}: ${g.what} | ${value.toFixed(3)} | ${sign} ${g.limit} | ${sign} ${g.target} | ${bad ? 'REGRESSED' : meets ? 'meets goal' : 'within limit'} |\n`);
        if (bad && quick) failed = true;
      }
    }
  } catch (err) {
    failed = true;
    process.stdout.write(`FAILED: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
}
process.stdout.write(`\n${new Date().toISOString()}  ${loadAverage()}\n`);
process.exit(failed ? 1 : 0);
