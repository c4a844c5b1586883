import { realpath, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import ExcelJS from 'exceljs';
import type { Row } from 'exceljs';
import { excelError } from './errors';
import { headerOf } from './header';
import { readHeader } from './inspect';
import { writable } from './part-writer';
import { outputPath } from './paths';
import { withSheet } from './sheet-stream';
import type { RunContext } from './split';

/**
 * `excel_merge`: appends the rows of several workbooks under one header (columns matched by
 * name, in first-seen order; a column one input lacks stays empty), optionally with a column
 * naming each row's source file. Streaming: one input is read at a time, and rows are committed
 * to the output as they arrive.
 */

export interface MergeInput {
  filePaths: string[];
  sheet?: string;
  headerRow: number;
  sourceColumn?: string;
}

export interface MergeOutcome {
  path: string;
  name: string;
  columns: string[];
  rowCount: number;
  sources: Array<{ path: string; sheet: string; rowCount: number }>;
}

export async function mergeWorkbooks(input: MergeInput, outDir: string, fileName: string, ctx: RunContext = {}): Promise<MergeOutcome> {
  if (input.filePaths.length === 0) throw excelError('excel_nothing_to_merge');
  const headers = [];
  for (const p of input.filePaths) headers.push(await readHeader(p, input.sheet, input.headerRow, ctx.signal));
  const columns: string[] = [];
  for (const h of headers) for (const n of h.header.names) if (!columns.includes(n)) columns.push(n);
  if (input.sourceColumn && !columns.includes(input.sourceColumn)) columns.push(input.sourceColumn);
  const path = await outputPath(outDir, fileName);
  for (const p of input.filePaths) if ((await realpath(p)) === path) throw excelError('excel_output_is_input', { path });

  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: true, useSharedStrings: false });
  const ws = wb.addWorksheet(headers[0]?.sheet.slice(0, 31) || 'Sheet1');
  const sources: MergeOutcome['sources'] = [];
  let total = 0;
  let wroteHeader = false;
  try {
    for (const [n, p] of input.filePaths.entries()) {
      let count = 0;
      const sheet = await withSheet(p, input.sheet, { styles: true, signal: ctx.signal }, async (s) => {
        let slot: number[] | undefined;
        for await (const row of s.rows) {
          if (row.number < input.headerRow) continue;
          if (!slot) {
            const h = headerOf(row);
            // output column j ← source column slot[j] (0 = none)
            slot = columns.map((c) => h.indexes[h.names.indexOf(c)] ?? 0);
            if (!wroteHeader) {
              if (n === 0) ws.columns = slot.map((i) => ({ width: s.widths().get(i) })) as never;
              const r = ws.addRow(columns);
              slot.forEach((i, j) => i && copyStyle(row, i, r, j + 1));
              r.commit();
              wroteHeader = true;
            }
            continue;
          }
          if (!row.hasValues) continue;
          const values = slot.map((i, j) => (i ? writable(row.getCell(i).value) : columns[j] === input.sourceColumn ? basename(p) : null));
          const r = ws.addRow(values);
          slot.forEach((i, j) => i && copyStyle(row, i, r, j + 1));
          r.commit();
          count++;
          if ((++total & 4095) === 0) ctx.progress?.({ message: `${total} rows merged`, current: total });
        }
        return s.name;
      });
      sources.push({ path: p, sheet, rowCount: count });
    }
    ws.commit();
    await wb.commit();
  } catch (e) {
    (wb as unknown as { stream?: { destroy(): void } }).stream?.destroy();
    await unlink(path).catch(() => {});
    throw e;
  }
  return { path, name: basename(path), columns, rowCount: sources.reduce((a, s) => a + s.rowCount, 0), sources };
}

function copyStyle(src: Row, i: number, dst: Row, j: number): void {
  const style = src.getCell(i).style;
  if (style && Object.keys(style).length) dst.getCell(j).style = style;
}
