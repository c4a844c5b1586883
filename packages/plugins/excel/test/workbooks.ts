import { writeFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';

/** Test workbooks, generated with exceljs (never checked in). */

export const REGIONS = ['North', 'South', 'East', 'West'] as const;

export interface InvoiceRow {
  invoice: string;
  region: string;
  customer: string;
  amount: number;
  date: Date;
}

export function invoiceRows(count: number, regions: readonly string[] = REGIONS): InvoiceRow[] {
  return Array.from({ length: count }, (_, i) => ({
    invoice: `INV-${String(i + 1).padStart(5, '0')}`,
    region: regions[i % regions.length] as string,
    customer: `Customer ${(i * 7) % 13}`,
    amount: Math.round(((i * 37) % 1000) * 100 + 1999) / 100,
    date: new Date(Date.UTC(2026, i % 12, 1 + (i % 28))),
  }));
}

/** An invoice workbook: bold header, widths 14/10/18/12/12, amount "#,##0.00", date "yyyy-mm-dd". */
export async function writeInvoices(path: string, rows: InvoiceRow[], options: { sheet?: string; extraSheet?: boolean } = {}): Promise<void> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet(options.sheet ?? 'Invoices');
  ws.columns = [
    { header: 'Invoice', key: 'invoice', width: 14 },
    { header: 'Region', key: 'region', width: 10 },
    { header: 'Customer', key: 'customer', width: 18 },
    { header: 'Amount', key: 'amount', width: 12, style: { numFmt: '#,##0.00' } },
    { header: 'Date', key: 'date', width: 12, style: { numFmt: 'yyyy-mm-dd' } },
  ];
  ws.getRow(1).font = { bold: true };
  for (const r of rows) ws.addRow(r);
  if (options.extraSheet) wb.addWorksheet('Notes').addRow(['Note', 'Generated for tests']);
  await wb.xlsx.writeFile(path);
}

export async function writeEmptySheet(path: string): Promise<void> {
  const wb = new ExcelJS.Workbook();
  wb.addWorksheet('Empty');
  await wb.xlsx.writeFile(path);
}

export async function writeCsvAsXlsx(path: string): Promise<void> {
  await writeFile(path, 'Invoice,Region,Amount\nINV-1,North,10\n');
}

/** Reads a whole workbook back (tests only: the worker itself streams). */
export async function readBack(path: string): Promise<ExcelJS.Worksheet> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  const ws = wb.worksheets[0];
  if (!ws) throw new Error(`no sheet in ${path}`);
  return ws;
}
