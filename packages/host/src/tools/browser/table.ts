/**
 * Reading an HTML table as rows. `extractTableInPage` runs inside the page (it must not use
 * anything outside its own body): it picks the table (the given element or its enclosing table,
 * else the `index`-th table of the document), takes the column names from the header row (`<th>`
 * cells in `<thead>` or the first row), expands `colspan`, and returns one object per data row.
 */

export interface TableResult {
  columns: string[];
  rows: Array<Record<string, string>>;
  rowCount: number;
  /** Data rows in the table (may exceed `rowCount` when `maxRows` cut it). */
  totalRows: number;
  truncated: boolean;
  caption: string;
}

export function extractTableInPage(arg: { element: Element | null; index: number; maxRows: number }): TableResult | null {
  const { element, index, maxRows } = arg;
  let table: HTMLTableElement | null = null;
  if (element) {
    table = element instanceof HTMLTableElement ? element : (element.closest('table') as HTMLTableElement | null);
    if (!table) table = element.querySelector('table');
  } else table = (document.querySelectorAll('table')[index] as HTMLTableElement | undefined) ?? null;
  if (!table) return null;
  const clean = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();
  const cells = (row: HTMLTableRowElement): string[] => {
    const out: string[] = [];
    for (const cell of Array.from(row.cells)) {
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text (no hidden or script content) is what a reader sees
      const text = clean((cell as HTMLElement).innerText ?? cell.textContent);
      const span = Math.max(1, Math.min(100, cell.colSpan || 1));
      for (let i = 0; i < span; i++) out.push(text);
    }
    return out;
  };
  const rows = Array.from(table.rows).filter((r) => r.closest('table') === table);
  const headIndex = rows.findIndex((r) => (r.parentElement?.tagName === 'THEAD' || Array.from(r.cells).every((c) => c.tagName === 'TH')) && r.cells.length > 0);
  const header = headIndex >= 0 ? cells(rows[headIndex] as HTMLTableRowElement) : [];
  const body = rows.filter((_, i) => i !== headIndex && (headIndex < 0 || i > headIndex));
  const width = Math.max(header.length, ...body.map((r) => cells(r).length), 0);
  const columns: string[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < width; i++) {
    const base = header[i] || `Column ${i + 1}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    columns.push(n === 1 ? base : `${base} (${n})`);
  }
  const data: Array<Record<string, string>> = [];
  for (const r of body) {
    if (data.length >= maxRows) break;
    const values = cells(r);
    if (values.every((v) => v === '')) continue;
    const row: Record<string, string> = {};
    columns.forEach((c, i) => {
      row[c] = values[i] ?? '';
    });
    data.push(row);
  }
  const totalRows = body.filter((r) => cells(r).some((v) => v !== '')).length;
  return { columns, rows: data, rowCount: data.length, totalRows, truncated: totalRows > data.length, caption: clean(table.caption?.textContent) };
}
