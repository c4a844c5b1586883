import { realpath } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { Row } from 'exceljs';
import { splitKey } from './cells';
import { fileNameFor, type SplitConfig } from './config';
import { excelError, throwIfAborted } from './errors';
import { type Header, headerOf, resolveColumns } from './header';
import { PartWriter } from './part-writer';
import { outputPath, safeFileName } from './paths';
import { EVERY_ROW, rowSelection } from './selection';
import { withSheet } from './sheet-stream';

/**
 * Runs a split configuration in one streaming pass: rows are read one at a time, filtered, and
 * appended to the part of their split value (a part is opened the first time its value appears).
 * Rows above and at the header row are copied into every part. Without a split column, the
 * filtered rows go into one workbook.
 */

export interface PartFile {
  name: string;
  path: string;
  /** The split value; null for an unsplit (filter-only) output. */
  value: string | null;
  rowCount: number;
}

export interface SplitOutcome {
  sheet: string;
  columns: string[];
  files: PartFile[];
  rowsRead: number;
  rowsSkipped: number;
}

export interface RunContext {
  signal?: AbortSignal;
  progress?: (p: { message?: string; current?: number; total?: number }) => void;
}

const EMPTY_VALUE = '(empty)';

export async function runSplit(config: SplitConfig, outDir: string, ctx: RunContext = {}): Promise<SplitOutcome> {
  const base = safeFileName(basename(config.filePath, extname(config.filePath)), 'workbook');
  const realInput = await realpath(config.filePath);
  return withSheet(config.filePath, config.sheet, { styles: true, signal: ctx.signal }, async (sheet) => {
    const preamble: Row[] = [];
    const parts = new Map<string, PartWriter>();
    const names = new Set<string>();
    let header: Header | undefined;
    let map: number[] = [];
    let sel = EVERY_ROW;
    let rowsRead = 0;
    let rowsSkipped = 0;
    const partFor = async (value: string): Promise<PartWriter> => {
      const existing = parts.get(value);
      if (existing) return existing;
      if (parts.size >= config.maxParts) throw excelError('excel_too_many_parts', { column: config.splitColumn, max: config.maxParts, limit: 500 });
      const name = uniqueName(names, safeFileName(fileNameFor(config.fileNamePattern, base, config.splitColumn === null ? '' : safeFileName(value, EMPTY_VALUE))).replace(/-$/, ''));
      const path = await outputPath(outDir, name);
      if (path === realInput) throw excelError('excel_output_is_input', { path });
      const writer = PartWriter.create(path, sheet.name, sheet.widths(), map);
      parts.set(value, writer);
      for (const r of preamble) writer.copyHeader(r, map);
      return writer;
    };
    try {
      for await (const row of sheet.rows) {
        if (!header) {
          preamble.push(row);
          if (row.number < config.headerRow) continue;
          if (row.number > config.headerRow) throw excelError('excel_sheet_empty', { sheet: sheet.name, headerRow: config.headerRow });
          header = headerOf(row);
          if (header.names.length === 0) throw excelError('excel_sheet_empty', { sheet: sheet.name, headerRow: config.headerRow });
          map = config.columns ? resolveColumns(header, config.columns, sheet.name) : header.indexes;
          sel = rowSelection(header, config, sheet.name);
          continue;
        }
        if (!row.hasValues) continue;
        rowsRead++;
        if (!sel.accepts(row)) {
          rowsSkipped++;
          continue;
        }
        const value = sel.split < 0 ? '' : splitKey(row.getCell(sel.split).value);
        (await partFor(value)).add(row, map);
        if ((rowsRead & 4095) === 0) ctx.progress?.({ message: `${rowsRead} rows read`, current: rowsRead });
      }
      if (!header) throw excelError('excel_sheet_empty', { sheet: sheet.name, headerRow: config.headerRow });
      if (rowsRead === 0) throw excelError('excel_no_data_rows', { sheet: sheet.name });
      throwIfAborted(ctx.signal);
      if (parts.size === 0 && sel.split < 0) await partFor('');
      for (const w of parts.values()) await w.close();
    } catch (e) {
      await Promise.all([...parts.values()].map((w) => w.discard()));
      throw e;
    }
    const files: PartFile[] = [...parts.entries()]
      .map(([value, w]) => ({ name: basename(w.path), path: w.path, value: sel.split < 0 ? null : value || EMPTY_VALUE, rowCount: w.rowCount }))
      .sort((a, b) => String(a.value).localeCompare(String(b.value)));
    const names2 = map.map((i) => header?.names[header.indexes.indexOf(i)] ?? '');
    return { sheet: sheet.name, columns: names2, files, rowsRead, rowsSkipped };
  });
}

/** `name.xlsx`, or `name-2.xlsx` … when two values clean up to the same file name. */
function uniqueName(taken: Set<string>, stem: string): string {
  let name = `${stem}.xlsx`;
  for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${stem}-${n}.xlsx`;
  taken.add(name.toLowerCase());
  return name;
}
