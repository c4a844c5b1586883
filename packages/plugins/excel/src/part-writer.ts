import { createWriteStream, type WriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import ExcelJS, { type CellValue, type Row, type Worksheet } from 'exceljs';

/**
 * One output workbook written with exceljs's streaming `WorkbookWriter`: every row is committed
 * (flushed to the zip stream) as soon as it is added, so a part never sits in memory.
 * Rows are copied through a column map (output column j ← source column map[j]) with their cell
 * styles (number formats, fonts, fills, borders) and heights; column widths are set up front.
 * Formula cells are written as their cached results: a row-relative formula would point at the
 * wrong row once the row moves into a part.
 */

export class PartWriter {
  rowCount = 0;
  private constructor(
    readonly path: string,
    private readonly wb: ExcelJS.stream.xlsx.WorkbookWriter,
    private readonly ws: Worksheet,
    private readonly stream: WriteStream,
  ) {}

  static create(path: string, sheetName: string, widths: ReadonlyMap<number, number>, map: readonly number[]): PartWriter {
    const stream = createWriteStream(path);
    const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream, useStyles: true, useSharedStrings: false });
    const ws = wb.addWorksheet(sheetName.slice(0, 31) || 'Sheet1');
    if (widths.size) ws.columns = map.map((src) => ({ width: widths.get(src) })) as never;
    return new PartWriter(path, wb, ws, stream);
  }

  /** Copies a header / preamble row (not counted as data). */
  copyHeader(src: Row, map: readonly number[]): void {
    copyRow(this.ws, src, map);
  }

  /** Copies a data row. */
  add(src: Row, map: readonly number[]): void {
    copyRow(this.ws, src, map);
    this.rowCount++;
  }

  /** Adds a row of plain values (a merge's generated columns). */
  addValues(values: CellValue[], styles?: Array<Partial<ExcelJS.Style> | undefined>): void {
    const r = this.ws.addRow(values);
    styles?.forEach((s, j) => {
      if (s && Object.keys(s).length) r.getCell(j + 1).style = s;
    });
    r.commit();
    this.rowCount++;
  }

  async close(): Promise<void> {
    this.ws.commit();
    await this.wb.commit();
  }

  /** Stops writing and removes the partial file. */
  async discard(): Promise<void> {
    this.stream.destroy();
    await unlink(this.path).catch(() => {});
  }
}

/** A formula cell's cached result; other values unchanged. */
export function writable(v: CellValue): CellValue {
  if (v && typeof v === 'object' && !(v instanceof Date) && ('formula' in v || 'sharedFormula' in v)) {
    const result = (v as { result?: unknown }).result;
    return result === undefined || (typeof result === 'object' && result !== null && !(result instanceof Date)) ? null : (result as CellValue);
  }
  return v;
}

function copyRow(ws: Worksheet, src: Row, map: readonly number[]): void {
  const values = map.map((i) => writable(src.getCell(i).value));
  const r = ws.addRow(values);
  map.forEach((i, j) => {
    const style = src.getCell(i).style;
    if (style && Object.keys(style).length) r.getCell(j + 1).style = style;
  });
  if (src.height) r.height = src.height;
  r.commit();
}
