import type { RunEvent } from '@fengyu/protocol';

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
 * when the payload itself holds one of those keys.
 */
export const payloadJson = new WeakMap<RunEvent, string>();

const frames = new WeakMap<RunEvent, string>();

export function frame(e: RunEvent): string {
  const hit = frames.get(e);
  if (hit !== undefined) return hit;
  const payload = payloadJson.get(e);
  let text: string;
  if (payload === undefined) {
    const { type, ...rest } = e;
    text = `id: ${e.seq}\nevent: ${type}\ndata: ${JSON.stringify({ type, ...rest })}\n\n`;
  } else text = frameOf(e.type, payload, e.runId, e.seq, e.ts);
  frames.set(e, text);
  return text;
}

/** The frame's text before the payload's members: its id and event lines, the data's opening and type. */
const frameHead = (type: string, seq: number) => `id: ${seq}\nevent: ${type}\ndata: {"type":${JSON.stringify(type)},`;
/** The frame's text after the payload's members: the envelope's other keys, the data's end, the blank line. */
const frameTail = (runId: string, seq: number, ts: string) => `"runId":${JSON.stringify(runId)},"seq":${seq},"ts":${JSON.stringify(ts)}}\n\n`;

/**
 * The frame of an event from its payload's JSON text: the JSON of { type, ...payload, runId, seq, ts },
 * i.e. the head, the payload's members followed by a comma (none for `{}`), the tail.
 */
function frameOf(type: string, payload: string, runId: string, seq: number, ts: string): string {
  return `${frameHead(type, seq)}${payload.length > 2 ? `${payload.slice(1, -1)},` : ''}${frameTail(runId, seq, ts)}`;
}

/** The frame of an event in the pieces `frameOf` joins, with its size in UTF-8 bytes. */
export interface FrameParts {
  head: string;
  payload: string;
  tail: string;
  size: number;
}

/**
 * The frame of a written event in pieces, to be written as bytes (`writeFrame`) without making its
 * text: the payload's stored JSON text is written as it is. Undefined when the log kept no such
 * text for the event, or its frame text is already made: then `frame(e)` is the frame.
 */
export function frameParts(e: RunEvent): FrameParts | undefined {
  const payload = payloadJson.get(e);
  if (payload === undefined || frames.has(e)) return undefined;
  const head = frameHead(e.type, e.seq);
  const tail = frameTail(e.runId, e.seq, e.ts);
  // the payload's braces are not written; a comma follows its members when it has any
  const size = Buffer.byteLength(head) + (payload.length > 2 ? Buffer.byteLength(payload) - 1 : 0) + Buffer.byteLength(tail);
  return { head, payload, tail, size };
}

/**
 * Writes a frame's pieces as UTF-8 at `at` (`size` bytes; `buf` must have room): the payload is
 * written over the head's last byte and its own braces are then overwritten by the commas.
 */
export function writeFrame(p: FrameParts, buf: Buffer, at: number): void {
  const h = buf.write(p.head, at, 'utf8');
  let end = at + h;
  if (p.payload.length > 2) {
    const n = buf.write(p.payload, end - 1, 'utf8');
    buf[end - 1] = 0x2c;
    end += n - 2;
    buf[end] = 0x2c;
    end += 1;
  }
  buf.write(p.tail, end, 'utf8');
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
