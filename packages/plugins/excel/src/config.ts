import type { CellValue } from 'exceljs';
import { z } from 'zod';
import { plainValue, splitKey } from './cells';
import { excelError } from './errors';

/**
 * The split / filter / column-selection configuration: one zod schema (the JSON Schema of
 * `excel_complex_config`'s result and of `excel_execute`'s `config` come from it) and the pure
 * row filter.
 */

export const FILTER_OPS = ['eq', 'ne', 'contains', 'notContains', 'gt', 'gte', 'lt', 'lte', 'in', 'notIn', 'empty', 'notEmpty'] as const;
export const MAX_PARTS_LIMIT = 500;

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

export const FilterSchema = z
  .object({
    column: z.string().min(1).describe('Header name of the column to test'),
    op: z.enum(FILTER_OPS).describe('Comparison; gt/lt compare numbers, dates (YYYY-MM-DD) or text'),
    value: z.union([Scalar, z.array(Scalar)]).optional().describe('Value to compare with (a list for in / notIn; none for empty / notEmpty)'),
  })
  .strict();

export const ConfigSchema = z
  .object({
    filePath: z.string().describe('Resolved path of the workbook'),
    sheet: z.string().describe('Sheet to read'),
    headerRow: z.number().int().min(1).max(100).describe('1-based row holding the column names'),
    splitColumn: z.string().nullable().describe('Column whose distinct values each get their own workbook; null writes one workbook'),
    filters: z.array(FilterSchema).max(20).describe('Rows must pass every filter'),
    columns: z.array(z.string()).nullable().describe('Columns to keep, in order; null keeps all'),
    fileNamePattern: z.string().describe('Output name; {base} is the input name, {value} the split value'),
    maxParts: z.number().int().min(1).max(MAX_PARTS_LIMIT),
  })
  .strict();

export type Filter = z.infer<typeof FilterSchema>;
export type SplitConfig = z.infer<typeof ConfigSchema>;

/** Checks a filter's shape beyond the schema (list ops need lists, comparisons need one value). */
export function checkFilter(f: Filter, index: number): void {
  const list = f.op === 'in' || f.op === 'notIn';
  const none = f.op === 'empty' || f.op === 'notEmpty';
  if (list && !Array.isArray(f.value)) throw excelError('excel_bad_filter', { index: index + 1, reason: `${f.op} needs a list of values` });
  if (!list && !none && (f.value === undefined || Array.isArray(f.value))) throw excelError('excel_bad_filter', { index: index + 1, reason: `${f.op} needs one value` });
}

function compare(cell: CellValue | undefined, value: string | number | boolean): number {
  const p = plainValue(cell);
  if (typeof value === 'number' && typeof p === 'number') return p - value;
  if (typeof value === 'number' && typeof p === 'string' && p.trim() !== '' && Number.isFinite(Number(p))) return Number(p) - value;
  return splitKey(cell).localeCompare(String(value));
}

function equals(cell: CellValue | undefined, value: string | number | boolean): boolean {
  const p = plainValue(cell);
  if (typeof value === 'number' || typeof value === 'boolean') return p === value || splitKey(cell) === String(value);
  return splitKey(cell) === value.trim();
}

/** True when the cell passes the filter. */
export function passes(f: Filter, cell: CellValue | undefined): boolean {
  const key = splitKey(cell);
  const v = f.value;
  switch (f.op) {
    case 'empty':
      return key === '';
    case 'notEmpty':
      return key !== '';
    case 'in':
      return Array.isArray(v) && v.some((x) => equals(cell, x));
    case 'notIn':
      return Array.isArray(v) && !v.some((x) => equals(cell, x));
    default:
      break;
  }
  if (v === undefined || Array.isArray(v)) return false;
  switch (f.op) {
    case 'eq':
      return equals(cell, v);
    case 'ne':
      return !equals(cell, v);
    case 'contains':
      return key.toLowerCase().includes(String(v).toLowerCase());
    case 'notContains':
      return !key.toLowerCase().includes(String(v).toLowerCase());
    case 'gt':
      return key !== '' && compare(cell, v) > 0;
    case 'gte':
      return key !== '' && compare(cell, v) >= 0;
    case 'lt':
      return key !== '' && compare(cell, v) < 0;
    case 'lte':
      return key !== '' && compare(cell, v) <= 0;
  }
  return false;
}

/** Fills `{base}` and `{value}` of a file-name pattern. */
export function fileNameFor(pattern: string, base: string, value: string): string {
  return pattern.replace(/\{base\}/g, base).replace(/\{value\}/g, value);
}
