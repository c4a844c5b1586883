import { localizedErrors, type ToolError } from '@fengyu/plugin-sdk';

/**
 * Error codes of the Excel worker, with messages in both languages. A failed call throws a
 * `ToolError` whose message is the English text and whose data is `{code, params, messageZh}`,
 * so the host (and a model) see a clear sentence and a stable code.
 */

export const en = {
  excel_unresolved_file_ref: 'Field "{field}" is a file reference object that the host did not resolve; pass a granted file (e.g. "@file:workbook") so the worker receives a real path.',
  excel_path_not_absolute: 'Field "{field}" must be an absolute path, got "{path}".',
  excel_file_not_found: 'The file "{path}" does not exist or is not readable (is it granted to this run?).',
  excel_not_a_file: '"{path}" is not a regular file.',
  excel_not_xlsx: '"{path}" is not an .xlsx workbook ({reason}).',
  excel_unreadable: 'The workbook "{path}" could not be read: {reason}',
  excel_directory_not_found: 'The output folder "{path}" does not exist or is not a folder (is it granted to this run?).',
  excel_output_escapes: 'The output file "{name}" would be written outside the output folder.',
  excel_output_is_link: 'The output path "{path}" is a symbolic link; refusing to write through it.',
  excel_output_is_input: 'The output file "{path}" is the input workbook; choose another file name or folder.',
  excel_sheet_not_found: 'The workbook has no sheet "{sheet}". Sheets: {available}.',
  excel_sheet_empty: 'The sheet "{sheet}" is empty (no header row {headerRow}).',
  excel_no_data_rows: 'The sheet "{sheet}" has a header but no data rows to process.',
  excel_missing_columns: 'Column(s) {missing} not found in sheet "{sheet}". Columns: {available}.',
  excel_bad_filter: 'Filter #{index} is invalid: {reason}',
  excel_too_many_parts: 'Splitting by "{column}" gives more than {max} parts; pick another column or raise maxParts (at most {limit}).',
  excel_bad_file_name: 'The file name "{name}" is invalid (letters, digits, spaces, . _ - and no path separators).',
  excel_nothing_to_merge: 'Nothing to merge: give at least one workbook.',
  excel_cancelled: 'The operation was cancelled.',
} as const;

export type ExcelErrorCode = keyof typeof en;

export const zhCN: Record<ExcelErrorCode, string> = {
  excel_unresolved_file_ref: '字段“{field}”是宿主未解析的文件引用对象；请传入已授权的文件（例如 "@file:workbook"），worker 才能收到真实路径。',
  excel_path_not_absolute: '字段“{field}”必须是绝对路径，收到的是“{path}”。',
  excel_file_not_found: '文件“{path}”不存在或不可读（是否已授权给本次运行？）。',
  excel_not_a_file: '“{path}”不是普通文件。',
  excel_not_xlsx: '“{path}”不是 .xlsx 工作簿（{reason}）。',
  excel_unreadable: '无法读取工作簿“{path}”：{reason}',
  excel_directory_not_found: '输出文件夹“{path}”不存在或不是文件夹（是否已授权给本次运行？）。',
  excel_output_escapes: '输出文件“{name}”会写到输出文件夹之外。',
  excel_output_is_link: '输出路径“{path}”是符号链接，拒绝通过它写入。',
  excel_output_is_input: '输出文件“{path}”就是输入工作簿；请换一个文件名或文件夹。',
  excel_sheet_not_found: '工作簿中没有工作表“{sheet}”。现有工作表：{available}。',
  excel_sheet_empty: '工作表“{sheet}”是空的（没有第 {headerRow} 行表头）。',
  excel_no_data_rows: '工作表“{sheet}”只有表头，没有可处理的数据行。',
  excel_missing_columns: '工作表“{sheet}”中找不到列 {missing}。现有列：{available}。',
  excel_bad_filter: '第 {index} 个筛选条件无效：{reason}',
  excel_too_many_parts: '按“{column}”拆分会得到超过 {max} 个部分；请换一列或调大 maxParts（最多 {limit}）。',
  excel_bad_file_name: '文件名“{name}”无效（只允许字母、数字、空格、. _ -，且不能包含路径分隔符）。',
  excel_nothing_to_merge: '没有可合并的内容：至少需要一个工作簿。',
  excel_cancelled: '操作已取消。',
};

/** A failed call with a stable code. */
export const excelError: (code: ExcelErrorCode, params?: Record<string, unknown>) => ToolError = localizedErrors(en, zhCN);

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw excelError('excel_cancelled');
}
