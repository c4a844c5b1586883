import type { Row } from 'exceljs';
import { passes, type SplitConfig } from './config';
import { type Header, resolveColumns } from './header';

/** Which rows a split takes, resolved against the sheet's header. */
export interface RowSelection {
  /** the split column's index (-1: no split column, one part) */
  split: number;
  /** true when the row passes every filter */
  accepts: (row: Row) => boolean;
}

/** Before the header is read: no split column, every row accepted. */
export const EVERY_ROW: RowSelection = { split: -1, accepts: () => true };

/** Resolves the config's split column and filters by name or letter against the header. */
export function rowSelection(h: Header, config: SplitConfig, sheet: string): RowSelection {
  const split = config.splitColumn === null ? -1 : (resolveColumns(h, [config.splitColumn], sheet)[0] as number);
  const filters = config.filters.map((f) => ({ index: resolveColumns(h, [f.column], sheet)[0] as number, f }));
  return { split, accepts: (row) => filters.every(({ index, f }) => passes(f, row.getCell(index).value)) };
}
