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

/** The frame of an event from its payload's JSON text: the JSON of { type, ...payload, runId, seq, ts }. */
function frameOf(type: string, payload: string, runId: string, seq: number, ts: string): string {
  return `id: ${seq}\nevent: ${type}\ndata: {"type":${JSON.stringify(type)},${payload.length > 2 ? `${payload.slice(1, -1)},` : ''}"runId":${JSON.stringify(runId)},"seq":${seq},"ts":${JSON.stringify(ts)}}\n\n`;
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
