import type { RunEvent } from '@fengyu/protocol';
import { frame, frameSize, runPieceBytes, writeFrame } from './frames';

/**
 * Bounds of the committed events kept in memory for a stream's replay: the runs most recently
 * created here, their payload JSON text counted (in all, and per run).
 */
const RECENT_RUNS = 16;
const RECENT_BYTES = 1024 * 1024;
const RECENT_RUN_BYTES = 256 * 1024;
/** A run's first buffer of frames (a 1-step run's whole log fits; it doubles as events come). */
const RECENT_FIRST_BYTES = 4 * 1024;

interface RecentRun {
  types: string[];
  /** The offset in `buf` where each event's frame ends. */
  ends: number[];
  buf: Buffer;
  /** Bytes of `buf` in use. */
  bytes: number;
  /** The run's piece of its frames (`runPieceBytes`). */
  run: Buffer;
}

/**
 * The SSE frames of the committed events of the runs most recently created in this process,
 * each the run's whole log from seq 1 in order (a stream's replay sends them instead of reading
 * the database). The frames are kept as UTF-8 bytes in one buffer per run (outside the V8 heap),
 * with each event's type and the offset where its frame ends: a young-generation collection
 * copies none of it, and the event objects and frame strings die young. A run leaves it when an
 * event would break that (a gap) or exceed the bounds; the event log keeps none with a shared
 * database (other processes append to it).
 */
export class RecentFrames {
  private readonly recent = new Map<string, RecentRun>();
  private recentBytes = 0;

  /** How many events of the run are kept (its log from seq 1), or undefined when it is not kept. */
  count(runId: string): number | undefined {
    return this.recent.get(runId)?.types.length;
  }

  /**
   * The frames (UTF-8, one buffer) and types of the run's kept events after `afterSeq`, the first
   * of seq `first`. The bytes are a view of memory that later events only append after.
   */
  after(runId: string, afterSeq: number): { first: number; types: string[]; bytes: Buffer } | undefined {
    const entry = this.recent.get(runId);
    if (!entry) return undefined;
    const from = Math.max(0, Math.min(afterSeq, entry.types.length));
    return { first: from + 1, types: entry.types.slice(from), bytes: entry.buf.subarray(from === 0 ? 0 : entry.ends[from - 1], entry.bytes) };
  }

  /** Keeps a committed event's frame (in seq order from 1; a gap or the bounds drop the run). */
  remember(e: RunEvent): void {
    let entry = this.recent.get(e.runId);
    if (!entry) {
      if (e.seq !== 1) return;
      entry = { types: [], ends: [], buf: Buffer.allocUnsafe(RECENT_FIRST_BYTES), bytes: 0, run: runPieceBytes(e.runId) };
      this.recent.set(e.runId, entry);
    } else if (e.seq !== entry.types.length + 1) {
      this.drop(e.runId, entry);
      return;
    }
    // the frame's bytes are written from its pieces; its text is made only when it has no stored payload text
    const measured = frameSize(e, entry.run);
    const text = measured === undefined ? frame(e) : undefined;
    const size = measured ?? Buffer.byteLength(text as string);
    if (entry.bytes + size > RECENT_RUN_BYTES) {
      this.drop(e.runId, entry);
      return;
    }
    if (entry.bytes + size > entry.buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(RECENT_RUN_BYTES, Math.max(entry.buf.length * 2, entry.bytes + size)));
      entry.buf.copy(grown, 0, 0, entry.bytes);
      entry.buf = grown;
    }
    if (text === undefined) writeFrame(e, entry.run, entry.buf, entry.bytes);
    else entry.buf.write(text, entry.bytes, 'utf8');
    entry.bytes += size;
    entry.types.push(e.type);
    entry.ends.push(entry.bytes);
    this.recentBytes += size;
    for (const [runId, oldest] of this.recent) {
      if (this.recent.size <= RECENT_RUNS && this.recentBytes <= RECENT_BYTES) break;
      this.drop(runId, oldest);
    }
  }

  private drop(runId: string, entry: RecentRun): void {
    this.recent.delete(runId);
    this.recentBytes -= entry.bytes;
  }
}
