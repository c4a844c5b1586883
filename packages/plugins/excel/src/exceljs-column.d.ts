/** The one exceljs internal the worker touches (see sheet-stream.ts). */
declare module 'exceljs/lib/doc/column.js' {
  const Column: { fromModel(worksheet: unknown, cols?: unknown): unknown };
  export default Column;
}
