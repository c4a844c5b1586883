import { lstat, open, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { excelError } from './errors';

/**
 * Path checks at the worker's edge. The host has already mapped grants to real paths; the worker
 * still refuses anything that is not an absolute path to an existing file (an unresolved FileRef
 * object, a relative path, a directory), anything that is not a zip-based workbook, and any
 * output that would land outside the given output folder.
 */

const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Rejects an object where a path string was expected (a FileRef the host did not resolve). */
export function pathField(value: unknown, field: string): string {
  if (value !== null && typeof value === 'object') throw excelError('excel_unresolved_file_ref', { field });
  if (typeof value !== 'string' || !isAbsolute(value)) throw excelError('excel_path_not_absolute', { field, path: String(value) });
  return value;
}

/** An existing .xlsx workbook (checked by its zip signature, not only its name). */
export async function checkWorkbook(value: unknown, field = 'filePath'): Promise<string> {
  const path = pathField(value, field);
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch {
    throw excelError('excel_file_not_found', { path });
  }
  if (!info.isFile()) throw excelError('excel_not_a_file', { path });
  if (!/\.(xlsx|xlsm)$/i.test(path)) throw excelError('excel_not_xlsx', { path, reason: 'the name does not end in .xlsx' });
  const head = Buffer.alloc(4);
  const fh = await open(path, 'r');
  try {
    await fh.read(head, 0, 4, 0);
  } finally {
    await fh.close();
  }
  if (!head.equals(ZIP_SIGNATURE)) throw excelError('excel_not_xlsx', { path, reason: 'the content is not a zip-based workbook (a CSV or old .xls renamed?)' });
  return path;
}

/** An existing folder; returns its real path. */
export async function checkOutputDir(value: unknown, field = 'outputDirectory'): Promise<string> {
  const path = pathField(value, field);
  try {
    const real = await realpath(path);
    if ((await stat(real)).isDirectory()) return real;
  } catch {}
  throw excelError('excel_directory_not_found', { path });
}

/** File names the worker writes: no separators, no control characters, no dot-files. */
export function safeFileName(raw: string, fallback = 'part'): string {
  const cleaned = raw
    .normalize('NFC')
    .replace(/[\\/:*?"<>|\u0000-\u001f\u007f]/g, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '')
    .slice(0, 100)
    .trim();
  return cleaned || fallback;
}

/** Checks a user-supplied output file name (e.g. of a merge) and adds `.xlsx` when missing. */
export function userFileName(raw: string): string {
  if (!/^[\p{L}\p{N} ._-]{1,120}$/u.test(raw) || raw.startsWith('.') || raw.includes('..')) throw excelError('excel_bad_file_name', { name: raw });
  return /\.xlsx$/i.test(raw) ? raw : `${raw}.xlsx`;
}

/** The full path of `name` inside `dir` (a real path); refuses escapes and symbolic links. */
export async function outputPath(dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  if (dirname(path) !== dir || basename(path) !== name) throw excelError('excel_output_escapes', { name });
  try {
    if ((await lstat(path)).isSymbolicLink()) throw excelError('excel_output_is_link', { path });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return path;
}
