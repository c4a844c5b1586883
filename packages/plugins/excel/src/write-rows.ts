import ExcelJS from 'exceljs';
import { outputPath } from './paths';

/**
 * Writes rows handed over as data (e.g. a table read from a web page) into a new workbook: a
 * bold header row, one row per object (values by column name) or array (values by position),
 * and column widths fitted to the longest value. Text that is a plain decimal number becomes a
 * number cell (so Excel can sum it) unless `keepText` is set.
 */

export interface WriteRowsRequest {
  columns?: string[];
  rows: Array<Record<string, unknown> | unknown[]>;
  sheetName: string;
  keepText: boolean;
}

const PLAIN_NUMBER = /^-?(?:0|[1-9]\d{0,14})(?:\.\d+)?$/;

export function cellValue(v: unknown, keepText: boolean): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  if (!keepText && PLAIN_NUMBER.test(text.trim())) return Number(text.trim());
  return text;
}

/** The header: `columns`, else the keys of the object rows in first-seen order. */
export function headerOf(req: Pick<WriteRowsRequest, 'columns' | 'rows'>): string[] {
  if (req.columns && req.columns.length > 0) return req.columns;
  const seen: string[] = [];
  let width = 0;
  for (const r of req.rows) {
    if (Array.isArray(r)) width = Math.max(width, r.length);
    else for (const k of Object.keys(r)) if (!seen.includes(k)) seen.push(k);
  }
  for (let i = seen.length; i < width; i++) seen.push(`Column ${i + 1}`);
  return seen;
}

export async function writeRows(dir: string, fileName: string, req: WriteRowsRequest): Promise<{ name: string; path: string; rowCount: number; columns: string[] }> {
  const path = await outputPath(dir, fileName);
  const columns = headerOf(req);
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet(req.sheetName.slice(0, 31) || 'Sheet1');
  ws.addRow(columns).font = { bold: true };
  const widths = columns.map((c) => c.length);
  for (const r of req.rows) {
    const values = columns.map((c, i) => cellValue(Array.isArray(r) ? r[i] : r[c], req.keepText));
    values.forEach((v, i) => {
      widths[i] = Math.max(widths[i] ?? 0, String(v ?? '').length);
    });
    ws.addRow(values);
  }
  ws.columns.forEach((col, i) => {
    col.width = Math.min(60, Math.max(8, (widths[i] ?? 8) + 2));
  });
  await wb.xlsx.writeFile(path);
  return { name: fileName, path, rowCount: req.rows.length, columns };
}
