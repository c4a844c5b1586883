import ExcelJS, { type Row } from 'exceljs';
import Column from 'exceljs/lib/doc/column.js';
import { excelError } from './errors';
import { patchZipEnd } from './zip-end';

/**
 * Streaming access to a workbook's sheets (exceljs `WorkbookReader`): rows arrive one at a
 * time and are never collected, so a 100,000-row sheet is never held in memory as a whole.
 *
 * exceljs 4.4.0's streaming WorksheetReader calls `Column.fromModel(cols)` with the column list in
 * the worksheet slot, which drops every column width. `patchColumnWidths` wraps the function once
 * so the reader keeps the widths (a test checks them round-trip).
 */

export interface SheetHandle {
  name: string;
  /** 1-based position in the order the reader met the sheet. */
  position: number;
  /** Column widths (1-based index → width); known once the first row arrived. */
  widths(): Map<number, number>;
  rows: AsyncIterable<Row>;
}

let patched = false;
function patchColumnWidths(): void {
  if (patched) return;
  patched = true;
  // Imported statically so the bundler packs the same module instance exceljs uses.
  const original = Column.fromModel;
  Column.fromModel = function fromModel(worksheet: unknown, cols?: unknown) {
    if (Array.isArray(worksheet) && cols === undefined) return original.call(this, null, worksheet);
    return original.call(this, worksheet, cols);
  };
}

interface ReaderSheet {
  name: string;
  columns: Array<{ width?: number; number: number }> | null;
  [Symbol.asyncIterator](): AsyncIterator<Row>;
}

/** Yields each sheet of the workbook; consume its rows before asking for the next one. */
export async function* openSheets(path: string, options: { styles?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<SheetHandle> {
  patchColumnWidths();
  patchZipEnd();
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(path, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: options.styles === false ? 'ignore' : 'cache',
    entries: 'ignore',
  });
  let position = 0;
  try {
    for await (const raw of reader as unknown as AsyncIterable<ReaderSheet>) {
      position++;
      yield {
        name: raw.name,
        position,
        widths: () => new Map((raw.columns ?? []).filter((c) => typeof c.width === 'number' && Number.isFinite(c.width)).map((c) => [c.number, c.width as number])),
        rows: abortable(raw, options.signal),
      };
    }
  } catch (e) {
    if ((e as { data?: unknown }).data) throw e;
    throw excelError('excel_unreadable', { path, reason: (e as Error).message });
  } finally {
    (reader as unknown as { stream?: { destroy(): void } }).stream?.destroy();
  }
}

async function* abortable(sheet: AsyncIterable<Row>, signal?: AbortSignal): AsyncGenerator<Row> {
  if (signal?.aborted) throw excelError('excel_cancelled');
  let n = 0;
  for await (const row of sheet) {
    if ((++n & 1023) === 0 && signal?.aborted) throw excelError('excel_cancelled');
    yield row;
  }
  if (signal?.aborted) throw excelError('excel_cancelled');
}

/** Opens the sheet named `sheet` (or the first one) and runs `visit` on it; other sheets are skipped. */
export async function withSheet<T>(path: string, sheet: string | undefined, options: { styles?: boolean; signal?: AbortSignal }, visit: (s: SheetHandle) => Promise<T>): Promise<T> {
  const seen: string[] = [];
  for await (const s of openSheets(path, options)) {
    if (sheet === undefined || s.name === sheet) return visit(s);
    seen.push(s.name);
  }
  if (sheet === undefined) throw excelError('excel_sheet_empty', { sheet: '(none)', headerRow: 1 });
  throw excelError('excel_sheet_not_found', { sheet, available: seen });
}
