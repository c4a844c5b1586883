import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoiceRows, writeInvoices } from './workbooks';

/** The worker as the host runs it: a child process speaking newline-delimited JSON-RPC on stdio. */

let child: ChildProcessWithoutNullStreams;
let dir: string;
let book: string;
const pending = new Map<number, (m: any) => void>();
let nextId = 1;

function call(method: string, params: unknown): Promise<any> {
  const id = nextId++;
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  return new Promise((resolve) => pending.set(id, resolve));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fy-excel-rpc-'));
  book = join(dir, 'invoices.xlsx');
  await writeInvoices(book, invoiceRows(12));
  child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../src/worker.ts')], { env: { ...process.env, FENGYU_PLUGIN_DATA: dir } });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line);
    if (typeof m.id === 'number') pending.get(m.id)?.(m);
  });
});
afterAll(async () => {
  child.stdin.end();
  await rm(dir, { recursive: true, force: true });
});

describe('excel worker over JSON-RPC', () => {
  it('describes seven methods with input and output schemas', async () => {
    const d = await call('$/describe', {});
    expect(Object.keys(d.result.methods).sort()).toEqual(['excel_analyze', 'excel_complex_config', 'excel_execute', 'excel_filter', 'excel_merge', 'excel_preview', 'excel_write_rows']);
    expect(d.result.methods.excel_analyze.inputSchema.properties.filePath).toMatchObject({ type: 'string', format: 'fengyu-file' });
    expect(d.result.methods.excel_execute.outputSchema.properties.files.type).toBe('array');
  });

  it('answers a call, and rejects an unresolved FileRef object with a clear message', async () => {
    const ok = await call('excel_analyze', { filePath: book });
    expect(ok.result.sheets[0].rowCount).toBe(12);
    const ref = await call('excel_analyze', { filePath: { fileId: 'f_123', name: 'workbook' } });
    expect(ref.error.code).toBe(-32602);
    expect(ref.error.message).toContain('file reference object that the host did not resolve');
    const csv = await call('excel_execute', { config: { filePath: 'relative.xlsx' }, outputDirectory: dir });
    expect(csv.error.code).toBe(-32602);
    const rel = await call('excel_preview', { filePath: 'invoices.xlsx' });
    expect(rel.error).toMatchObject({ code: -32000, data: { code: 'excel_path_not_absolute' } });
  });

  it('writes rows given as data into a new workbook, and refuses a bad file name', async () => {
    const rows = [
      { Product: 'Widget', Price: '12.5', Code: '007' },
      { Product: 'Gadget', Price: '7' },
    ];
    const ok = await call('excel_write_rows', { rows, outputDirectory: dir, fileName: 'stock' });
    expect(ok.result).toMatchObject({ success: true, file: { name: 'stock.xlsx', rowCount: 2 }, columns: ['Product', 'Price', 'Code'] });
    const back = await call('excel_preview', { filePath: ok.result.file.path });
    expect(back.result.rows.map((r: { values: Record<string, unknown> }) => r.values)).toEqual([
      { Product: 'Widget', Price: 12.5, Code: '007' },
      { Product: 'Gadget', Price: 7 },
    ]);
    const arrays = await call('excel_write_rows', { rows: [['a', 1]], columns: ['Name', 'N'], outputDirectory: dir, fileName: 'arrays.xlsx', keepText: true });
    expect(arrays.result.columns).toEqual(['Name', 'N']);
    const bad = await call('excel_write_rows', { rows, outputDirectory: dir, fileName: '../escape' });
    expect(bad.error).toMatchObject({ data: { code: 'excel_bad_file_name' } });
  });
});
