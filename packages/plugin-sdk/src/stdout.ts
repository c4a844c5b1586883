import { writeSync } from 'node:fs';

/** The part of `process.stdout` the writer uses (a test passes its own). */
export interface QueueingStream {
  readonly writableLength: number;
  write(chunk: string | Uint8Array): boolean;
}

/**
 * The worker's writes to stdout: each with one `write(2)` straight to the descriptor, without the
 * stream machinery. What the descriptor does not take at once (a full non-blocking pipe: `EAGAIN`
 * or a partial write; any other error) goes through `stream`, which queues it and reports its
 * errors as before; and while `stream` holds anything queued (that remainder, or a plugin's own
 * `console.log`), every later write goes behind it through `stream` too. So bytes leave whole and
 * in order, and nothing written through `stream` is overtaken.
 */
export function directWriter(stream: QueueingStream, fd: number, write: typeof writeSync = writeSync): (text: string) => void {
  return (text) => {
    if (stream.writableLength > 0) {
      stream.write(text);
      return;
    }
    let written = 0;
    try {
      written = write(fd, text);
    } catch {
      // nothing left: the stream writes it all (and reports a broken pipe as before)
    }
    if (written === Buffer.byteLength(text)) return;
    if (written === 0) stream.write(text);
    else stream.write(Buffer.from(text, 'utf8').subarray(written));
  };
}
