import type { Duplex } from 'node:stream';
import unzipper from 'unzipper';

/**
 * unzipper 0.10's `Parse` emits 'end' as soon as its input is consumed ('finish'), while entries it
 * has already pushed can still wait, unread, in its buffer. exceljs's streaming reader stops at that
 * 'end' and never sees them: the last entry of a workbook exceljs wrote is xl/workbook.xml, so such
 * a read failed now and then ("reading 'sheets'"), more often under load; a workbook whose last
 * entry is a sheet lost that sheet (exceljs issue #3064). The wrapped `Parse` lets through only the
 * stream's own end, which comes after its last entry was read (the parser ends the stream at the
 * central directory; a truncated file is an error instead).
 */
let patched = false;
export function patchZipEnd(): void {
  if (patched) return;
  patched = true;
  // Imported statically so the bundler packs the same module instance exceljs requires.
  const original = unzipper.Parse;
  unzipper.Parse = function Parse(opts) {
    const zip: Duplex = original(opts);
    const emit = zip.emit;
    zip.emit = function (this: Duplex, event: string | symbol, ...args: unknown[]): boolean {
      if (event === 'end' && !zip.readableEnded) return false;
      return emit.call(this, event, ...args);
    } as Duplex['emit'];
    return zip;
  };
}
