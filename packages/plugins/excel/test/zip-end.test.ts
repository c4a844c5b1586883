import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import unzipper from 'unzipper';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as H from '../src/handlers';
import { patchZipEnd } from '../src/zip-end';
import { invoiceRows, writeInvoices } from './workbooks';

/**
 * The zip stream exceljs's streaming reader walks ends after its last entry was read, not when its
 * input has been consumed: a reader that stopped at the early end lost the entries still buffered
 * (the last one of an exceljs-written workbook is xl/workbook.xml).
 */

const ctx = { signal: new AbortController().signal, progress: () => {} };
let dir: string;
let book: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fy-zip-end-'));
  book = join(dir, 'invoices.xlsx');
  await writeInvoices(book, invoiceRows(5), { extraSheet: true });
  patchZipEnd();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the zip stream of the streaming reader', () => {
  it('is the unzipper module exceljs requires', () => {
    const exceljs = createRequire(import.meta.url).resolve('exceljs');
    expect(createRequire(exceljs)('unzipper')).toBe(unzipper);
  });

  it('does not end when its input is consumed while entries are still unread', async () => {
    const zip = unzipper.Parse({ forceStream: true });
    let ended = false;
    zip.on('end', () => (ended = true));
    createReadStream(book).pipe(zip);
    // every entry of the small workbook fits in the buffers: the file is consumed before any is read
    await once(zip, 'finish');
    expect(zip.readableLength).toBeGreaterThan(0);
    expect(ended).toBe(false);
    const names: string[] = [];
    for await (const entry of zip as AsyncIterable<{ path: string; autodrain(): unknown }>) {
      expect(ended).toBe(false);
      names.push(entry.path);
      entry.autodrain();
    }
    expect(ended).toBe(true);
    expect(names).toContain('xl/worksheets/sheet1.xml');
    expect(names).toContain('xl/worksheets/sheet2.xml');
    expect(names.at(-1)).toBe('xl/workbook.xml');
  });

  it('still fails on a truncated workbook instead of waiting for entries that never come', async () => {
    const whole = await readFile(book);
    const cut = join(dir, 'cut.xlsx');
    await writeFile(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
    const zip = unzipper.Parse({ forceStream: true });
    createReadStream(cut).pipe(zip);
    const walk = (async () => {
      for await (const entry of zip as AsyncIterable<{ autodrain(): unknown }>) entry.autodrain();
    })();
    await expect(walk).rejects.toThrow('FILE_ENDED');
    const read = await H.analyze({ filePath: cut, headerRow: 1 }, ctx).catch((e: { data?: { code?: string } }) => e.data?.code);
    expect(read).toBe('excel_unreadable');
  });
});
