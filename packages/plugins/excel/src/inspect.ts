import { type CellJson, cellToJson, splitKey } from './cells';
import type { SplitConfig } from './config';
import { excelError } from './errors';
import { type Header, headerOf, nameAt } from './header';
import { EVERY_ROW, rowSelection } from './selection';
import { withSheet } from './sheet-stream';

/** Read-only passes: the header row, a page of rows, and the parts a configuration would produce. */

export interface HeaderRead {
  sheet: string;
  header: Header;
}

/** Reads up to the header row only, then stops the stream. */
export async function readHeader(path: string, sheet: string | undefined, headerRow: number, signal?: AbortSignal): Promise<HeaderRead> {
  return withSheet(path, sheet, { signal }, async (s) => {
    for await (const row of s.rows) {
      if (row.number < headerRow) continue;
      if (row.number > headerRow) break;
      const header = headerOf(row);
      if (header.names.length) return { sheet: s.name, header };
      break;
    }
    throw excelError('excel_sheet_empty', { sheet: s.name, headerRow });
  });
}

export interface Preview {
  sheet: string;
  columns: string[];
  rows: Array<{ row: number; values: Record<string, CellJson> }>;
  hasMore: boolean;
}

export async function previewRows(path: string, sheet: string | undefined, headerRow: number, offset: number, limit: number, signal?: AbortSignal): Promise<Preview> {
  return withSheet(path, sheet, { signal }, async (s) => {
    let header: Header | undefined;
    const rows: Preview['rows'] = [];
    let seen = 0;
    let hasMore = false;
    for await (const row of s.rows) {
      if (row.number < headerRow) continue;
      if (!header) {
        if (row.number > headerRow) break;
        header = headerOf(row);
        continue;
      }
      if (!row.hasValues) continue;
      if (seen++ < offset) continue;
      if (rows.length >= limit) {
        hasMore = true;
        break;
      }
      const values: Record<string, CellJson> = {};
      const cells = row.values as unknown[];
      for (let i = 1; i < cells.length; i++) {
        const v = cellToJson(cells[i] as never);
        if (v !== null) values[nameAt(header, i)] = v;
      }
      rows.push({ row: row.number, values });
    }
    if (!header || header.names.length === 0) throw excelError('excel_sheet_empty', { sheet: s.name, headerRow });
    return { sheet: s.name, columns: header.names, rows, hasMore };
  });
}

export interface PartCount {
  value: string;
  rowCount: number;
}

/** The parts `config` would write (value and row count), without writing anything. */
export async function countParts(config: SplitConfig, signal?: AbortSignal): Promise<{ parts: PartCount[]; rowsRead: number; rowsSkipped: number }> {
  return withSheet(config.filePath, config.sheet, { signal }, async (s) => {
    let header: Header | undefined;
    let sel = EVERY_ROW;
    const counts = new Map<string, number>();
    let rowsRead = 0;
    let rowsSkipped = 0;
    for await (const row of s.rows) {
      if (row.number < config.headerRow) continue;
      if (!header) {
        if (row.number > config.headerRow) break;
        const h = headerOf(row);
        header = h;
        sel = rowSelection(h, config, s.name);
        continue;
      }
      if (!row.hasValues) continue;
      rowsRead++;
      if (!sel.accepts(row)) {
        rowsSkipped++;
        continue;
      }
      const key = sel.split < 0 ? '' : splitKey(row.getCell(sel.split).value) || '(empty)';
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (counts.size > config.maxParts) throw excelError('excel_too_many_parts', { column: config.splitColumn, max: config.maxParts, limit: 500 });
    }
    if (!header || header.names.length === 0) throw excelError('excel_sheet_empty', { sheet: s.name, headerRow: config.headerRow });
    const parts = [...counts.entries()].map(([value, rowCount]) => ({ value, rowCount })).sort((a, b) => a.value.localeCompare(b.value));
    return { parts, rowsRead, rowsSkipped };
  });
}
