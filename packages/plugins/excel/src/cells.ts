import type { CellValue } from 'exceljs';

/** Pure helpers on exceljs cell values: JSON form, kinds for type inference, split keys. */

export type CellJson = string | number | boolean | null;
export type CellKind = 'empty' | 'integer' | 'number' | 'text' | 'date' | 'boolean' | 'error';
export type ColumnType = Exclude<CellKind, 'empty'> | 'empty' | 'mixed';

type Obj = Record<string, unknown>;

/** The value a formula, rich text or hyperlink cell shows. */
export function plainValue(v: CellValue | undefined): CellValue | undefined {
  if (v === null || v === undefined || typeof v !== 'object' || v instanceof Date) return v;
  const o = v as unknown as Obj;
  if ('result' in o || 'formula' in o || 'sharedFormula' in o) return plainValue(o.result as CellValue);
  if (Array.isArray(o.richText)) return (o.richText as Array<{ text?: string }>).map((r) => r.text ?? '').join('');
  if ('hyperlink' in o || 'text' in o) return plainValue(o.text as CellValue);
  if ('error' in o) return v;
  return String(v);
}

export function cellToJson(v: CellValue | undefined): CellJson {
  const p = plainValue(v);
  if (p === null || p === undefined) return null;
  if (p instanceof Date) return Number.isNaN(p.getTime()) ? null : p.toISOString();
  if (typeof p === 'object') return String((p as unknown as Obj).error ?? '');
  if (typeof p === 'string' || typeof p === 'number' || typeof p === 'boolean') return p;
  return String(p);
}

export function kindOf(v: CellValue | undefined): CellKind {
  const p = plainValue(v);
  if (p === null || p === undefined || p === '') return 'empty';
  if (p instanceof Date) return 'date';
  if (typeof p === 'number') return Number.isInteger(p) ? 'integer' : 'number';
  if (typeof p === 'boolean') return 'boolean';
  if (typeof p === 'object') return 'error';
  return 'text';
}

/** Folds the kinds seen in a column into one inferred type (integers inside numbers count as numbers). */
export function inferType(counts: Partial<Record<CellKind, number>>): ColumnType {
  const seen = (Object.keys(counts) as CellKind[]).filter((k) => k !== 'empty' && (counts[k] ?? 0) > 0);
  if (seen.length === 0) return 'empty';
  if (seen.length === 1) return seen[0] as ColumnType;
  if (seen.length === 2 && seen.includes('integer') && seen.includes('number')) return 'number';
  return 'mixed';
}

/** The text a split groups by: dates as YYYY-MM-DD, numbers and booleans as written, empty as "". */
export function splitKey(v: CellValue | undefined): string {
  const p = plainValue(v);
  if (p === null || p === undefined) return '';
  if (p instanceof Date) return Number.isNaN(p.getTime()) ? '' : p.toISOString().slice(0, 10);
  if (typeof p === 'object') return String((p as unknown as Obj).error ?? '');
  return String(p).trim();
}

/** Column letters of a 1-based index: 1 → A, 27 → AA. */
export function columnLetter(index: number): string {
  let n = index;
  let s = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    s = String.fromCharCode(65 + r) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}
