import { z } from 'zod';
import { ConfigSchema, FilterSchema, MAX_PARTS_LIMIT } from './config';
import { en } from './errors';

/** Input and output schemas of the six methods (the manifest's rpc.methods are generated from them). */

const notFileRef = (field: string) => (iss: { input?: unknown }) =>
  iss.input !== null && typeof iss.input === 'object' ? en.excel_unresolved_file_ref.replace('{field}', field) : undefined;

export const filePath = (field = 'filePath') =>
  z.string({ error: notFileRef(field) }).min(1).meta({ format: 'fengyu-file' }).describe('Resolved absolute path of a granted .xlsx workbook (e.g. "@file:workbook")');

export const outputDirectory = () =>
  z.string({ error: notFileRef('outputDirectory') }).min(1).meta({ format: 'fengyu-directory' }).describe('Resolved absolute path of a granted, writable output folder (e.g. "@file:output")');

const sheet = z.string().min(1).optional().describe('Sheet name; default the first sheet');
const headerRow = z.number().int().min(1).max(100).default(1).describe('1-based row holding the column names');
const cell = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const AnalyzeInput = z.object({ filePath: filePath(), headerRow });
const ColumnInfo = z.object({
  name: z.string(),
  letter: z.string(),
  index: z.number().int(),
  type: z.enum(['empty', 'integer', 'number', 'text', 'date', 'boolean', 'error', 'mixed']),
  nonEmpty: z.number().int(),
  distinct: z.number().int(),
  distinctCapped: z.boolean(),
  samples: z.array(cell),
});
export const AnalyzeOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  fileName: z.string(),
  sheets: z.array(z.object({ name: z.string(), rowCount: z.number().int(), columnCount: z.number().int(), headerRow: z.number().int(), columns: z.array(ColumnInfo) })),
});

export const PreviewInput = z.object({
  filePath: filePath(),
  sheet,
  headerRow,
  offset: z.number().int().min(0).default(0).describe('Data rows to skip'),
  limit: z.number().int().min(1).max(200).default(20).describe('Rows to return (at most 200)'),
});
export const PreviewOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  sheet: z.string(),
  columns: z.array(z.string()),
  rows: z.array(z.object({ row: z.number().int(), values: z.record(z.string(), cell) })),
  hasMore: z.boolean(),
});

export const ConfigInput = z.object({
  filePath: filePath(),
  sheet,
  headerRow,
  splitColumn: z.string().min(1).optional().describe('Column to split by (one workbook per distinct value); omit to write one filtered workbook'),
  filters: z.array(FilterSchema).max(20).default([]).describe('Keep only rows passing every filter'),
  columns: z.array(z.string().min(1)).min(1).max(1000).optional().describe('Columns to keep, in order; default all'),
  fileNamePattern: z.string().min(1).max(120).optional().describe('Output file name without .xlsx; {base} = input name, {value} = split value. Default "{base}-{value}"'),
  maxParts: z.number().int().min(1).max(MAX_PARTS_LIMIT).default(100).describe(`Refuse to write more parts than this (at most ${MAX_PARTS_LIMIT})`),
});
export const ConfigOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  config: ConfigSchema,
  availableColumns: z.array(z.string()),
  parts: z.array(z.object({ value: z.string(), rowCount: z.number().int() })),
  rowsRead: z.number().int(),
  rowsSkipped: z.number().int(),
});

const PartFile = z.object({ name: z.string(), path: z.string(), value: z.string().nullable(), rowCount: z.number().int() });

export const ExecuteInput = z.object({
  config: ConfigSchema.describe('The config object returned by excel_complex_config'),
  filePath: filePath().optional().describe('The workbook again (overrides config.filePath), e.g. "@file:workbook"'),
  outputDirectory: outputDirectory(),
});
export const ExecuteOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  sheet: z.string(),
  columns: z.array(z.string()),
  outputDirectory: z.string(),
  files: z.array(PartFile),
  rowsRead: z.number().int(),
  rowsSkipped: z.number().int(),
});

export const FilterInput = z.object({
  filePath: filePath(),
  sheet,
  headerRow,
  filters: z.array(FilterSchema).min(1).max(20),
  columns: z.array(z.string().min(1)).min(1).max(1000).optional(),
  outputDirectory: outputDirectory(),
  fileName: z.string().min(1).max(120).optional().describe('Output file name; default "<input>-filtered.xlsx"'),
});
export const FilterOutput = z.object({ success: z.literal(true), summary: z.string(), file: PartFile, rowsRead: z.number().int(), rowsSkipped: z.number().int() });

export const MergeInput = z.object({
  filePaths: z.array(filePath('filePaths')).min(1).max(200).describe('Workbooks to append, in order'),
  sheet,
  headerRow,
  sourceColumn: z.string().min(1).max(100).optional().describe('Adds a column with each row\'s source file name'),
  outputDirectory: outputDirectory(),
  fileName: z.string().min(1).max(120).default('merged.xlsx'),
});
export const MergeOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  file: z.object({ name: z.string(), path: z.string(), rowCount: z.number().int() }),
  columns: z.array(z.string()),
  sources: z.array(z.object({ path: z.string(), sheet: z.string(), rowCount: z.number().int() })),
});

export const WriteRowsInput = z.object({
  rows: z
    .array(z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]))
    .max(100_000)
    .describe('The rows: objects (values by column name, e.g. browser_extract_table rows) or arrays (values by position)'),
  columns: z.array(z.string().min(1).max(200)).max(500).optional().describe('Column names and order; default the keys of the row objects'),
  outputDirectory: outputDirectory(),
  fileName: z.string().min(1).max(120).default('table.xlsx').describe('Output file name (.xlsx is added when missing)'),
  sheetName: z.string().min(1).max(31).default('Sheet1'),
  keepText: z.boolean().default(false).describe('Keep number-like text as text (default: plain decimal numbers become number cells)'),
});
export const WriteRowsOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  file: z.object({ name: z.string(), path: z.string(), rowCount: z.number().int() }),
  columns: z.array(z.string()),
});
