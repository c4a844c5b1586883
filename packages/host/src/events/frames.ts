import type { RunEvent } from '@fengyu/protocol';
import { attached } from './attached';

/** A run event as stored: its payload (the event without type, runId, seq and ts) as JSON text. */
export type StoredEvent = { run_id: string; seq: number; type: string; data: string; ts: string };

/**
 * The SSE frame of a run event: `id: <seq>`, `event: <type>`, `data: <json>` with the JSON of
 * { type, ...payload, runId, seq, ts }. Made from the payload's stored JSON text where the log
 * kept it (no second JSON.stringify), once per event: every subscriber and the log's replay
 * memory share it.
 */

/**
 * The payload of a written event as the JSON text stored in the log (the event without type,
 * runId, seq and ts), kept so that the SSE frame is not made by a second JSON.stringify. Absent
 * when the payload itself holds one of those keys. Attached to the event (a WeakMap entry per
 * written event cost more than making its frame).
 */
export const payloadJson = attached<RunEvent, string>();

/**
 * The last event framed and its frame: every subscriber of a live event asks for its frame in
 * turn, in one publication, so the first makes it and the others get it from here.
 */
let lastFrame: { e?: RunEvent; text: string } = { text: '' };

export function frame(e: RunEvent): string {
  if (lastFrame.e === e) return lastFrame.text;
  const payload = payloadJson.get(e);
  let text: string;
  if (payload === undefined) {
    const { type, ...rest } = e;
    text = `id: ${e.seq}\nevent: ${type}\ndata: ${JSON.stringify({ type, ...rest })}\n\n`;
  } else text = frameOf(e.type, payload, e.runId, e.seq, e.ts);
  lastFrame = { e, text };
  return text;
}

/**
 * The frame's text in pieces: `id: `, the seq, the type's piece, the payload's members followed by a
 * comma (none for `{}`), the run's piece, the seq again, the timestamp's piece. `frameOf` joins them
 * as text; `frameSize` and `writeFrame` write the same bytes without making the text.
 */
const typePiece = (type: string) => `\nevent: ${type}\ndata: {"type":${JSON.stringify(type)},`;
const runPiece = (runId: string) => `"runId":${JSON.stringify(runId)},"seq":`;
const tsPiece = (ts: string) => `,"ts":${JSON.stringify(ts)}}\n\n`;

/**
 * The pieces as text, each made once: by type (a small fixed set), and for the last run and the
 * last timestamp (a group commit's events share its timestamp, a run's events its run).
 */
const typeTexts = new Map<string, string>();
let lastRunText = { runId: '', text: runPiece('') };
let lastTsText = { ts: '', text: tsPiece('') };

function typeText(type: string): string {
  let t = typeTexts.get(type);
  if (t === undefined) {
    t = typePiece(type);
    if (typeTexts.size < 256) typeTexts.set(type, t);
  }
  return t;
}

function runText(runId: string): string {
  if (lastRunText.runId !== runId) lastRunText = { runId, text: runPiece(runId) };
  return lastRunText.text;
}

function tsText(ts: string): string {
  if (lastTsText.ts !== ts) lastTsText = { ts, text: tsPiece(ts) };
  return lastTsText.text;
}

/** The frame of an event from its payload's JSON text: the JSON of { type, ...payload, runId, seq, ts }. */
function frameOf(type: string, payload: string, runId: string, seq: number, ts: string): string {
  return `id: ${seq}${typeText(type)}${payload.length > 2 ? `${payload.slice(1, -1)},` : ''}${runText(runId)}${seq}${tsText(ts)}`;
}

/** A run's piece of its frames as bytes, made once per run by whoever writes its frames. */
export const runPieceBytes = (runId: string): Buffer => Buffer.from(runPiece(runId), 'utf8');

const ID = Buffer.from('id: ', 'latin1');
/** The type pieces as bytes (the types are a small fixed set) and the last timestamp's (a commit's events share it). */
const typeBytes = new Map<string, Buffer>();
let lastTs = { ts: '', bytes: Buffer.alloc(0) };

function typeBytesOf(type: string): Buffer {
  let b = typeBytes.get(type);
  if (b === undefined) {
    b = Buffer.from(typePiece(type), 'utf8');
    if (typeBytes.size < 256) typeBytes.set(type, b);
  }
  return b;
}

function tsBytesOf(ts: string): Buffer {
  if (lastTs.ts !== ts) lastTs = { ts, bytes: Buffer.from(tsPiece(ts), 'utf8') };
  return lastTs.bytes;
}

function digits(n: number): number {
  let count = 1;
  for (let v = n; v >= 10; v = Math.floor(v / 10)) count++;
  return count;
}

function writeDigits(buf: Buffer, at: number, n: number, count: number): void {
  for (let i = at + count - 1, v = n; i >= at; i--, v = Math.floor(v / 10)) buf[i] = 48 + (v % 10);
}

/**
 * The size in UTF-8 bytes of the frame of a written event, when the log kept its payload's text
 * and its text is not made yet (`writeFrame` writes it); else undefined, and `frame(e)` is the frame.
 */
export function frameSize(e: RunEvent, run: Buffer): number | undefined {
  const payload = payloadJson.get(e);
  if (payload === undefined || lastFrame.e === e || !Number.isSafeInteger(e.seq) || e.seq < 0) return undefined;
  const members = payload.length > 2 ? Buffer.byteLength(payload) - 1 : 0;
  return ID.length + 2 * digits(e.seq) + typeBytesOf(e.type).length + members + run.length + tsBytesOf(e.ts).length;
}

/** Writes the frame `frameSize` measured at `at` (`buf` must have room for it); returns the bytes written. */
export function writeFrame(e: RunEvent, run: Buffer, buf: Buffer, at: number): number {
  const payload = payloadJson.get(e) as string;
  const n = digits(e.seq);
  let end = at;
  buf.set(ID, end);
  end += ID.length;
  writeDigits(buf, end, e.seq, n);
  end += n;
  const type = typeBytesOf(e.type);
  buf.set(type, end);
  end += type.length;
  if (payload.length > 2) {
    // the payload is written over the type piece's last byte (a comma), then its own braces become commas
    const written = buf.write(payload, end - 1, 'utf8');
    buf[end - 1] = 0x2c;
    end += written - 2;
    buf[end] = 0x2c;
    end += 1;
  }
  buf.set(run, end);
  end += run.length;
  writeDigits(buf, end, e.seq, n);
  end += n;
  const ts = tsBytesOf(e.ts);
  buf.set(ts, end);
  return end + ts.length - at;
}

/** Keys of the envelope: a stored payload that may hold one at its top level is parsed first. */
const ENVELOPE_KEY = /"(?:type|runId|seq|ts)"\s*:/;

/**
 * The frame of a stored event, made from the stored payload text without parsing it (a replay
 * sends what the log holds); a payload that may hold an envelope key is parsed (the envelope wins).
 */
export function storedFrame(r: StoredEvent): string {
  if (r.data.startsWith('{') && !ENVELOPE_KEY.test(r.data)) return frameOf(r.type, r.data, r.run_id, r.seq, r.ts);
  const payload = JSON.parse(r.data) as object;
  return frame({ ...payload, type: r.type, runId: r.run_id, seq: r.seq, ts: r.ts } as RunEvent);
}
