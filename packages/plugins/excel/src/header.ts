import type { Row } from 'exceljs';
import { cellToJson, columnLetter } from './cells';
import { excelError } from './errors';

/** The header row of a sheet: column names (unique, never empty) and name → 1-based index lookup. */

export interface Header {
  names: string[];
  /** 1-based column index of each name (same order as `names`). */
  indexes: number[];
}

export function headerOf(row: Row): Header {
  const values = row.values as unknown[];
  const names: string[] = [];
  const indexes: number[] = [];
  const used = new Map<string, number>();
  for (let i = 1; i < values.length; i++) {
    const v = cellToJson(values[i] as never);
    let name = v === null || String(v).trim() === '' ? '' : String(v).trim();
    if (!name) continue;
    const n = (used.get(name) ?? 0) + 1;
    used.set(name, n);
    if (n > 1) name = `${name} (${n})`;
    names.push(name);
    indexes.push(i);
  }
  // Untitled columns that hold data later still need a name; they are added on demand.
  return { names, indexes };
}

/** A name for an untitled column (used when data appears under an empty header cell). */
export function untitled(index: number): string {
  return `Column ${columnLetter(index)}`;
}

/** Finds columns by name (exact, then case-insensitive); throws one error listing every missing name. */
export function resolveColumns(header: Header, wanted: readonly string[], sheet: string): number[] {
  const missing: string[] = [];
  const out: number[] = [];
  for (const w of wanted) {
    const name = w.trim();
    let i = header.names.indexOf(name);
    if (i < 0) i = header.names.findIndex((n) => n.toLowerCase() === name.toLowerCase());
    if (i < 0) missing.push(w);
    else out.push(header.indexes[i] as number);
  }
  if (missing.length) throw excelError('excel_missing_columns', { missing, sheet, available: header.names });
  return out;
}

export function nameAt(header: Header, index: number): string {
  const i = header.indexes.indexOf(index);
  return i >= 0 ? (header.names[i] as string) : untitled(index);
}
