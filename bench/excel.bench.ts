import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import ExcelJS from 'exceljs';
import { ConfigSchema } from '../packages/plugins/excel/src/config';
import { runSplit } from '../packages/plugins/excel/src/split';
import { fmt, median } from './stats';

/**
 * The Excel plugin's streaming split against exceljs's own read-then-write: a generated
 * 100,000-row workbook split into 50 parts (one per Branch value) by `runSplit` (streaming
 * WorkbookReader → 50 WorkbookWriters), versus `workbook.xlsx.readFile` + `writeFile` of the same
 * file (the whole workbook in memory once). Each measurement runs in its own child process, so
 * peak RSS (`resourceUsage().maxRSS`) belongs to that job alone.
 */

const ROWS = 100_000;
const PARTS = 50;
const ROUNDS = 2;
const CHILD_FLAG = '--excel-bench-child';

async function generate(path: string): Promise<void> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: true });
  const ws = wb.addWorksheet('Data');
  ws.columns = [{ width: 12 }, { width: 12 }, { width: 22 }, { width: 14 }, { width: 12 }, { width: 30 }];
  ws.addRow(['Invoice', 'Branch', 'Customer', 'Amount', 'Date', 'Note']).commit();
  for (let i = 0; i < ROWS; i++) {
    const r = ws.addRow([`INV-${i + 1}`, `B${String(i % PARTS).padStart(2, '0')}`, `Customer ${(i * 7919) % 977}`, ((i * 37) % 100_000) / 100, new Date(Date.UTC(2026, i % 12, 1 + (i % 28))), `row ${i} of the benchmark`]);
    r.getCell(4).numFmt = '#,##0.00';
    r.getCell(5).numFmt = 'yyyy-mm-dd';
    r.commit();
  }
  ws.commit();
  await wb.commit();
}

/** In the child: one job, then its time and peak memory as JSON on stdout. */
async function child(job: string, input: string, out: string): Promise<void> {
  const t0 = performance.now();
  if (job === 'split') {
    const config = ConfigSchema.parse({ filePath: input, sheet: 'Data', headerRow: 1, splitColumn: 'Branch', filters: [], columns: null, fileNamePattern: '{base}-{value}', maxParts: 500 });
    const r = await runSplit(config, out);
    if (r.files.length !== PARTS || r.rowsRead !== ROWS) throw new Error(`unexpected split: ${r.files.length} parts, ${r.rowsRead} rows`);
  } else {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(input);
    await wb.xlsx.writeFile(join(out, 'copy.xlsx'));
  }
  const ms = performance.now() - t0;
  process.stdout.write(`${JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
}

function measure(job: string, input: string, out: string): Promise<{ ms: number; maxRssMb: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', import.meta.filename, CHILD_FLAG, job, input, out], { maxBuffer: 1 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${job} failed: ${stderr || err.message}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1) as string));
    });
  });
}

export async function run(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fengyu-bench-excel-'));
  try {
    const input = join(dir, 'big.xlsx');
    await generate(input);
    const results: Record<string, Array<{ ms: number; maxRssMb: number }>> = { split: [], copy: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const job of ['split', 'copy'] as const) {
        const out = join(dir, `${job}-${round}`);
        mkdirSync(out);
        results[job]?.push(await measure(job, input, out));
        if (job === 'split' && round === 0 && readdirSync(out).length !== PARTS) throw new Error('split wrote the wrong number of parts');
      }
    }
    const row = (label: string, job: 'split' | 'copy') => {
      const r = results[job] ?? [];
      const ms = median(r.map((x) => x.ms));
      const mb = median(r.map((x) => x.maxRssMb));
      const base = results.copy ?? [];
      return `| ${label} | ${fmt(ms / 1000, 2)} | ${fmt(mb, 0)} | ${fmt(ms / median(base.map((x) => x.ms)), 2)} | ${fmt(mb / median(base.map((x) => x.maxRssMb)), 2)} |`;
    };
    return [
      `${ROWS.toLocaleString('en')} rows × 6 columns (${fmt(statSync(input).size / 1e6, 1)} MB), split into ${PARTS} parts; median of ${ROUNDS} runs, each in its own process`,
      '| job | seconds | peak RSS MB | time ratio | memory ratio |',
      '|---|---|---|---|---|',
      row('excel_execute core: streaming split into 50 workbooks', 'split'),
      row('baseline: exceljs readFile + writeFile (one copy)', 'copy'),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === CHILD_FLAG) {
  await child(process.argv[3] as string, process.argv[4] as string, process.argv[5] as string);
  process.exit(0);
}
