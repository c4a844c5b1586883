/**
 * Writes examples/invoices.xlsx: 200 invoices across four regions (North, South, East, West)
 * with amounts, dates and statuses — the sample for the "Excel split → batch email" template.
 * Deterministic (seeded numbers, fixed document dates), so re-running gives the same rows.
 *
 *   npx tsx examples/make-invoices.ts [out.xlsx] [rows]
 */
import { resolve } from 'node:path';
import ExcelJS from 'exceljs';

const REGIONS = ['North', 'South', 'East', 'West'];
const CUSTOMERS = ['Acme Trading', 'Blue River Foods', 'Cedar & Co', 'Delta Logistics', 'Evergreen Retail', 'Fuyu Electronics', 'Golden Gate Supply', 'Harbor Tools'];
const STATUSES = ['Paid', 'Open', 'Overdue'];

/** A small seeded generator (mulberry32): the same sequence on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function makeInvoices(out: string, count = 200): Promise<string> {
  const rnd = random(20260101);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)] as T;
  const wb = new ExcelJS.Workbook();
  wb.creator = 'FengYu examples';
  wb.created = wb.modified = new Date(Date.UTC(2026, 0, 1));
  const ws = wb.addWorksheet('Invoices', { views: [{ state: 'frozen', ySplit: 1 }] });
  ws.columns = [
    { header: 'Invoice', key: 'invoice', width: 12 },
    { header: 'Date', key: 'date', width: 12, style: { numFmt: 'yyyy-mm-dd' } },
    { header: 'Region', key: 'region', width: 10 },
    { header: 'Customer', key: 'customer', width: 22 },
    { header: 'Amount', key: 'amount', width: 14, style: { numFmt: '#,##0.00' } },
    { header: 'Status', key: 'status', width: 10 },
  ];
  const header = ws.getRow(1);
  header.font = { bold: true, color: { argb: 'FFFFFFFF' } };
  header.fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FF1D6F42' } };
  for (let i = 0; i < count; i++) {
    ws.addRow({
      invoice: `INV-${String(1001 + i)}`,
      date: new Date(Date.UTC(2026, Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 28))),
      region: pick(REGIONS),
      customer: pick(CUSTOMERS),
      amount: Math.round(50_00 + rnd() * 9_950_00) / 100,
      status: pick(STATUSES),
    });
  }
  await wb.xlsx.writeFile(out);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('make-invoices.ts')) {
  const out = resolve(process.argv[2] ?? resolve(import.meta.dirname, 'invoices.xlsx'));
  const rows = Number(process.argv[3] ?? 200);
  await makeInvoices(out, rows);
  process.stdout.write(`wrote ${rows} invoices to ${out}\n`);
}
