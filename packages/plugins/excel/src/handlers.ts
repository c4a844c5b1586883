import { basename } from 'node:path';
import type { MethodContext } from '@fengyu/plugin-sdk';
import type { z } from 'zod';
import { analyzeWorkbook, summarize } from './analyze';
import type { SplitConfig } from './config';
import { checkFilter } from './config';
import { resolveColumns } from './header';
import { countParts, previewRows, readHeader } from './inspect';
import { mergeWorkbooks } from './merge';
import { checkOutputDir, checkWorkbook, userFileName } from './paths';
import type * as S from './schemas';
import { runSplit } from './split';
import { writeRows as writeRowsCore } from './write-rows';

/** The six methods' bodies: check paths at the edge, then call the streaming cores. */

type Ctx = Pick<MethodContext, 'signal' | 'progress'>;
type In<T extends z.ZodType> = z.output<T>;
type Out<T extends z.ZodType> = z.input<T>;

export async function analyze(input: In<typeof S.AnalyzeInput>, ctx: Ctx): Promise<Out<typeof S.AnalyzeOutput>> {
  const path = await checkWorkbook(input.filePath);
  const sheets = await analyzeWorkbook(path, input.headerRow, ctx.signal);
  return { success: true, summary: summarize(path, sheets), fileName: basename(path), sheets };
}

export async function preview(input: In<typeof S.PreviewInput>, ctx: Ctx): Promise<Out<typeof S.PreviewOutput>> {
  const path = await checkWorkbook(input.filePath);
  const p = await previewRows(path, input.sheet, input.headerRow, input.offset, input.limit, ctx.signal);
  const summary = `${p.rows.length} row(s) of "${p.sheet}" from data row ${input.offset + 1}${p.hasMore ? '; more follow' : ''}`;
  return { success: true, summary, ...p };
}

export async function complexConfig(input: In<typeof S.ConfigInput>, ctx: Ctx): Promise<Out<typeof S.ConfigOutput>> {
  const path = await checkWorkbook(input.filePath);
  input.filters.forEach(checkFilter);
  const { sheet, header } = await readHeader(path, input.sheet, input.headerRow, ctx.signal);
  const config: SplitConfig = {
    filePath: path,
    sheet,
    headerRow: input.headerRow,
    splitColumn: input.splitColumn ?? null,
    filters: input.filters,
    columns: input.columns ?? null,
    fileNamePattern: input.fileNamePattern ?? (input.splitColumn ? '{base}-{value}' : '{base}-filtered'),
    maxParts: input.maxParts,
  };
  // Every column name (split, filters, selection) is checked at once, then the parts are counted.
  resolveColumns(header, [...(config.splitColumn ? [config.splitColumn] : []), ...config.filters.map((f) => f.column), ...(config.columns ?? [])], sheet);
  const counted = await countParts(config, ctx.signal);
  const what = config.splitColumn ? `split "${sheet}" by ${config.splitColumn} into ${counted.parts.length} workbook(s) (${counted.parts.map((p) => `${p.value}: ${p.rowCount}`).join(', ')})` : `write ${counted.parts[0]?.rowCount ?? 0} row(s) of "${sheet}" into one workbook`;
  const summary = `Will ${what}${config.filters.length ? `; ${counted.rowsSkipped} row(s) filtered out` : ''}.`;
  return { success: true, summary, config, availableColumns: header.names, ...counted };
}

export async function execute(input: In<typeof S.ExecuteInput>, ctx: Ctx): Promise<Out<typeof S.ExecuteOutput>> {
  const filePath = await checkWorkbook(input.filePath ?? input.config.filePath, input.filePath ? 'filePath' : 'config.filePath');
  input.config.filters.forEach(checkFilter);
  const outDir = await checkOutputDir(input.outputDirectory);
  const r = await runSplit({ ...input.config, filePath }, outDir, ctx);
  const summary = `Wrote ${r.files.length} workbook(s) to ${outDir}: ${r.files.map((f) => `${f.name} (${f.rowCount} rows)`).join(', ')}.`;
  return { success: true, summary, outputDirectory: outDir, ...r };
}

export async function filter(input: In<typeof S.FilterInput>, ctx: Ctx): Promise<Out<typeof S.FilterOutput>> {
  const filePath = await checkWorkbook(input.filePath);
  input.filters.forEach(checkFilter);
  const outDir = await checkOutputDir(input.outputDirectory);
  const stem = input.fileName ? userFileName(input.fileName).replace(/\.xlsx$/i, '') : '{base}-filtered';
  const { sheet } = await readHeader(filePath, input.sheet, input.headerRow, ctx.signal);
  const config: SplitConfig = { filePath, sheet, headerRow: input.headerRow, splitColumn: null, filters: input.filters, columns: input.columns ?? null, fileNamePattern: stem, maxParts: 1 };
  const r = await runSplit(config, outDir, ctx);
  const file = r.files[0] as (typeof r.files)[number];
  return { success: true, summary: `Kept ${file.rowCount} of ${r.rowsRead} row(s) in ${file.name}.`, file, rowsRead: r.rowsRead, rowsSkipped: r.rowsSkipped };
}

export async function merge(input: In<typeof S.MergeInput>, ctx: Ctx): Promise<Out<typeof S.MergeOutput>> {
  const paths: string[] = [];
  for (const [i, p] of input.filePaths.entries()) paths.push(await checkWorkbook(p, `filePaths[${i}]`));
  const outDir = await checkOutputDir(input.outputDirectory);
  const name = userFileName(input.fileName);
  const r = await mergeWorkbooks({ filePaths: paths, sheet: input.sheet, headerRow: input.headerRow, sourceColumn: input.sourceColumn }, outDir, name, ctx);
  return {
    success: true,
    summary: `Merged ${r.rowCount} row(s) from ${r.sources.length} workbook(s) into ${r.name}.`,
    file: { name: r.name, path: r.path, rowCount: r.rowCount },
    columns: r.columns,
    sources: r.sources,
  };
}

export async function writeRows(input: In<typeof S.WriteRowsInput>, _ctx: Ctx): Promise<Out<typeof S.WriteRowsOutput>> {
  const outDir = await checkOutputDir(input.outputDirectory);
  const name = userFileName(input.fileName);
  const r = await writeRowsCore(outDir, name, { rows: input.rows, sheetName: input.sheetName, keepText: input.keepText, ...(input.columns ? { columns: input.columns } : {}) });
  return {
    success: true,
    summary: `Wrote ${r.rowCount} row(s) with ${r.columns.length} column(s) into ${r.name}.`,
    file: { name: r.name, path: r.path, rowCount: r.rowCount },
    columns: r.columns,
  };
}
