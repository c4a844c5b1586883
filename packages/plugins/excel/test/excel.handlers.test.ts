import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as H from '../src/handlers';
import * as S from '../src/schemas';
import { invoiceRows, readBack, REGIONS, writeCsvAsXlsx, writeEmptySheet, writeInvoices } from './workbooks';

const ctx = { signal: new AbortController().signal, progress: () => {} };
let dir: string;
let book: string;
const rows = invoiceRows(40);

const configOf = async (args: Record<string, unknown>) => H.complexConfig(S.ConfigInput.parse({ filePath: book, ...args }), ctx);
const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as { data?: { code?: string } }).data?.code ?? (e as Error).message;
  }
  return 'no error';
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fy-excel-'));
  book = join(dir, 'invoices.xlsx');
  await writeInvoices(book, rows, { extraSheet: true });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('excel_analyze / excel_preview', () => {
  it('reports sheets, inferred column types, distinct counts and row counts', async () => {
    const r = await H.analyze(S.AnalyzeInput.parse({ filePath: book }), ctx);
    expect(r.sheets.map((s) => s.name)).toEqual(['Invoices', 'Notes']);
    const inv = r.sheets[0];
    expect(inv?.rowCount).toBe(40);
    expect(inv?.columns.map((c) => [c.name, c.type])).toEqual([
      ['Invoice', 'text'],
      ['Region', 'text'],
      ['Customer', 'text'],
      ['Amount', 'number'],
      ['Date', 'date'],
    ]);
    expect(inv?.columns[1]?.distinct).toBe(4);
    expect(r.summary).toContain('invoices.xlsx');
  });

  it('previews a page of rows keyed by column name', async () => {
    const r = await H.preview(S.PreviewInput.parse({ filePath: book, offset: 2, limit: 3 }), ctx);
    expect(r.rows.map((x) => x.values.Invoice)).toEqual(['INV-00003', 'INV-00004', 'INV-00005']);
    expect(r.rows[0]?.row).toBe(4);
    expect(r.hasMore).toBe(true);
    expect(r.rows[0]?.values.Date).toBe(rows[2]?.date.toISOString());
  });
});

describe('excel_complex_config → excel_execute', () => {
  it('splits by a column: one workbook per value, header, formats and widths kept', async () => {
    const c = await configOf({ splitColumn: 'Region' });
    expect(c.parts).toEqual([...REGIONS].sort().map((value) => ({ value, rowCount: 10 })));
    const out = join(dir, 'out-split');
    await mkdir(out);
    const r = await H.execute(S.ExecuteInput.parse({ config: c.config, outputDirectory: out }), ctx);
    expect(r.files.map((f) => [f.name, f.value, f.rowCount])).toEqual([...REGIONS].sort().map((v) => [`invoices-${v}.xlsx`, v, 10]));
    for (const f of r.files) {
      const ws = await readBack(f.path);
      expect(ws.getRow(1).values).toEqual([undefined, 'Invoice', 'Region', 'Customer', 'Amount', 'Date']);
      expect(ws.getRow(1).getCell(1).font?.bold).toBe(true);
      expect(ws.rowCount).toBe(11);
      const expected = rows.filter((x) => x.region === f.value);
      for (let i = 0; i < expected.length; i++) {
        const row = ws.getRow(i + 2);
        expect(row.getCell(1).value).toBe(expected[i]?.invoice);
        expect(row.getCell(2).value).toBe(f.value);
        expect(row.getCell(4).value).toBe(expected[i]?.amount);
        expect(row.getCell(4).numFmt).toBe('#,##0.00');
        expect((row.getCell(5).value as Date).toISOString()).toBe(expected[i]?.date.toISOString());
      }
      expect(ws.columns.map((col) => col.width)).toEqual([14, 10, 18, 12, 12]);
    }
  });

  it('applies filters and a column selection', async () => {
    const c = await configOf({ splitColumn: 'Region', filters: [{ column: 'Amount', op: 'gt', value: 200 }], columns: ['Invoice', 'Amount'] });
    const out = join(dir, 'out-filter');
    await mkdir(out);
    const r = await H.execute(S.ExecuteInput.parse({ config: c.config, filePath: book, outputDirectory: out }), ctx);
    const kept = rows.filter((x) => x.amount > 200);
    expect(r.files.reduce((a, f) => a + f.rowCount, 0)).toBe(kept.length);
    expect(r.rowsSkipped).toBe(rows.length - kept.length);
    const ws = await readBack(r.files[0]?.path as string);
    expect(ws.getRow(1).values).toEqual([undefined, 'Invoice', 'Amount']);
    expect(ws.columns.map((col) => col.width)).toEqual([14, 12]);
  });

  it('filters into one workbook and merges parts back', async () => {
    const out = join(dir, 'out-merge');
    await mkdir(out);
    const f = await H.filter(S.FilterInput.parse({ filePath: book, filters: [{ column: 'Region', op: 'in', value: ['North', 'East'] }], outputDirectory: out }), ctx);
    expect(f.file).toMatchObject({ name: 'invoices-filtered.xlsx', rowCount: 20, value: null });
    const c = await configOf({ splitColumn: 'Region' });
    const parts = await H.execute(S.ExecuteInput.parse({ config: c.config, outputDirectory: out }), ctx);
    const m = await H.merge(S.MergeInput.parse({ filePaths: parts.files.map((p) => p.path), outputDirectory: out, sourceColumn: 'Source' }), ctx);
    expect(m.file.rowCount).toBe(40);
    expect(m.columns).toEqual(['Invoice', 'Region', 'Customer', 'Amount', 'Date', 'Source']);
    const ws = await readBack(m.file.path);
    expect(ws.rowCount).toBe(41);
    expect(ws.getRow(2).getCell(6).value).toBe('invoices-East.xlsx');
  });

  it('cleans split values into safe, unique file names', async () => {
    const odd = join(dir, 'odd.xlsx');
    await writeInvoices(odd, invoiceRows(6, ['a/b', 'a:b', '../x', '']));
    const out = join(dir, 'out-odd');
    await mkdir(out);
    const c = await H.complexConfig(S.ConfigInput.parse({ filePath: odd, splitColumn: 'Region' }), ctx);
    const r = await H.execute(S.ExecuteInput.parse({ config: c.config, outputDirectory: out }), ctx);
    for (const f of r.files) expect(f.path).toBe(join(out, f.name));
    expect(new Set(r.files.map((f) => f.name)).size).toBe(r.files.length);
    expect(r.files.find((f) => f.value === '(empty)')?.rowCount).toBe(1);
  });
});

describe('title rows above the header', () => {
  it('uses headerRow and copies the rows above it into every part', async () => {
    const path = join(dir, 'titled.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Report');
    ws.addRow(['Invoice report 2026']);
    ws.addRow(['Invoice', 'Region', 'Amount']);
    for (const [i, r] of ['North', 'South', 'North'].entries()) ws.addRow([`I-${i}`, r, i * 10]);
    await wb.xlsx.writeFile(path);
    const a = await H.analyze(S.AnalyzeInput.parse({ filePath: path, headerRow: 2 }), ctx);
    expect(a.sheets[0]?.columns.map((c) => c.name)).toEqual(['Invoice', 'Region', 'Amount']);
    expect(a.sheets[0]?.rowCount).toBe(3);
    const out = join(dir, 'out-titled');
    await mkdir(out);
    const c = await H.complexConfig(S.ConfigInput.parse({ filePath: path, headerRow: 2, splitColumn: 'region' }), ctx);
    const r = await H.execute(S.ExecuteInput.parse({ config: c.config, outputDirectory: out }), ctx);
    expect(r.files.map((f) => [f.value, f.rowCount])).toEqual([['North', 2], ['South', 1]]);
    const north = await readBack(r.files[0]?.path as string);
    expect(north.getRow(1).getCell(1).value).toBe('Invoice report 2026');
    expect(north.getRow(2).values).toEqual([undefined, 'Invoice', 'Region', 'Amount']);
    expect(north.getRow(4).getCell(1).value).toBe('I-2');
  });
});

describe('hostile input', () => {
  it('rejects a CSV renamed .xlsx, a missing file, a relative path and a directory', async () => {
    const csv = join(dir, 'fake.xlsx');
    await writeCsvAsXlsx(csv);
    expect(await codeOf(H.analyze({ filePath: csv, headerRow: 1 }, ctx))).toBe('excel_not_xlsx');
    expect(await codeOf(H.analyze({ filePath: join(dir, 'nope.xlsx'), headerRow: 1 }, ctx))).toBe('excel_file_not_found');
    expect(await codeOf(H.analyze({ filePath: 'invoices.xlsx', headerRow: 1 }, ctx))).toBe('excel_path_not_absolute');
    expect(await codeOf(H.analyze({ filePath: dir, headerRow: 1 }, ctx))).toBe('excel_not_a_file');
    expect(await codeOf(H.analyze({ filePath: { fileId: 'abc', name: 'workbook' } as never, headerRow: 1 }, ctx))).toBe('excel_unresolved_file_ref');
  });

  it('rejects missing columns, naming every missing one and the available ones', async () => {
    const err = await configOf({ splitColumn: 'Regoin', columns: ['Invoice', 'Total'] }).catch((e) => e);
    expect(err.data.code).toBe('excel_missing_columns');
    expect(err.data.params.missing).toEqual(['Regoin', 'Total']);
    expect(err.message).toContain('"Region"');
  });

  it('rejects an empty sheet, a header-only sheet and an unknown sheet', async () => {
    const empty = join(dir, 'empty.xlsx');
    await writeEmptySheet(empty);
    expect(await codeOf(configOf({ filePath: empty, splitColumn: 'Region' }))).toBe('excel_sheet_empty');
    const headerOnly = join(dir, 'header-only.xlsx');
    await writeInvoices(headerOnly, []);
    const c = await H.complexConfig(S.ConfigInput.parse({ filePath: headerOnly, splitColumn: 'Region' }), ctx);
    expect(c.parts).toEqual([]);
    expect(await codeOf(H.execute(S.ExecuteInput.parse({ config: c.config, outputDirectory: dir }), ctx))).toBe('excel_no_data_rows');
    expect(await codeOf(configOf({ sheet: 'Nope' }))).toBe('excel_sheet_not_found');
  });

  it('refuses bad filters, too many parts, a missing output folder and symbolic links in it', async () => {
    expect(await codeOf(configOf({ filters: [{ column: 'Region', op: 'in', value: 'North' }] }))).toBe('excel_bad_filter');
    expect(await codeOf(configOf({ splitColumn: 'Invoice', maxParts: 5 }))).toBe('excel_too_many_parts');
    const c = await configOf({ splitColumn: 'Region' });
    expect(await codeOf(H.execute(S.ExecuteInput.parse({ config: c.config, outputDirectory: join(dir, 'missing') }), ctx))).toBe('excel_directory_not_found');
    const out = join(dir, 'out-link');
    await mkdir(out);
    await writeFile(join(dir, 'target.txt'), 'keep');
    await symlink(join(dir, 'target.txt'), join(out, 'invoices-East.xlsx'));
    expect(await codeOf(H.execute(S.ExecuteInput.parse({ config: c.config, outputDirectory: out }), ctx))).toBe('excel_output_is_link');
    expect(await codeOf(H.filter(S.FilterInput.parse({ filePath: book, filters: [{ column: 'Region', op: 'eq', value: 'North' }], outputDirectory: dir, fileName: 'invoices' }), ctx))).toBe('excel_output_is_input');
    expect(await codeOf(H.merge(S.MergeInput.parse({ filePaths: [book], outputDirectory: dir, fileName: '../x.xlsx' }), ctx))).toBe('excel_bad_file_name');
  });

  it('stops when cancelled', async () => {
    const big = join(dir, 'big.xlsx');
    await writeInvoices(big, invoiceRows(5000));
    const ac = new AbortController();
    ac.abort();
    expect(await codeOf(H.analyze({ filePath: big, headerRow: 1 }, { signal: ac.signal, progress: () => {} }))).toBe('excel_cancelled');
  });
});
