import { createWorker } from '@fengyu/plugin-sdk';
import * as H from './handlers';
import * as S from './schemas';

/** fan.summer.excel — the official Excel plugin's worker (exceljs, streaming). */
createWorker()
  .method('excel_analyze', { description: 'Analyze a granted workbook: sheets, columns with inferred types, distinct-value counts and row counts.', input: S.AnalyzeInput, output: S.AnalyzeOutput }, H.analyze)
  .method('excel_preview', { description: 'Return a page of rows of one sheet (values keyed by column name).', input: S.PreviewInput, output: S.PreviewOutput }, H.preview)
  .method('excel_complex_config', { description: 'Build and validate a split / filter / column-selection configuration; returns the config object and the parts it would write.', input: S.ConfigInput, output: S.ConfigOutput }, H.complexConfig)
  .method('excel_execute', { description: 'Run a configuration: one workbook per distinct split value, written into the granted output folder, keeping headers, formats and column widths.', input: S.ExecuteInput, output: S.ExecuteOutput }, H.execute)
  .method('excel_filter', { description: 'Write the rows passing the filters (optionally only some columns) into one new workbook in the output folder.', input: S.FilterInput, output: S.FilterOutput }, H.filter)
  .method('excel_merge', { description: 'Append the rows of several workbooks under one header (columns matched by name) into a new workbook.', input: S.MergeInput, output: S.MergeOutput }, H.merge)
  .method('excel_write_rows', { description: 'Write rows given as data (objects by column name, or arrays) into a new workbook in the output folder.', input: S.WriteRowsInput, output: S.WriteRowsOutput }, H.writeRows)
  .start();
