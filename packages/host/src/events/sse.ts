import { type RunEvent, STREAM_END_EVENTS } from '@fengyu/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventLog, StoredEvent } from './event-log';
import { frame, storedFrame } from './frames';

export { frame, storedFrame };

/**
 * SSE fan-out of a run's log: every persisted event after the cursor (`Last-Event-ID`), then
 * live ones, ending after `complete`, `error`, `cancelled` or `interrupted`. Subscribing before
 * reading the log, and de-duplicating by seq, means no event is lost or sent twice.
 *
 * The replay sends every event, a terminal one that a later `resumed` superseded included (no
 * seq gap), and ends the stream after it only when the run has ended for good. A cursor already
 * at or past the last event of an ended run is answered 204 at once: nothing will follow, and
 * 204 tells a reconnecting EventSource to stop instead of holding a connection open.
 */

const HELLO = ': connected\n\n';
const HELLO_BYTES = Buffer.from(HELLO, 'latin1');

/** Takes over a reply as an SSE response: its status line and headers (those set by hooks kept). */
function startSse(reply: FastifyReply): FastifyReply['raw'] {
  reply.hijack();
  const res = reply.raw;
  // a shallow copy of the reply's headers (Fastify's documented answer), completed in place
  // instead of spread into another object
  const headers = reply.getHeaders() as Record<string, string>;
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache, no-transform';
  headers.connection = 'keep-alive';
  headers['x-accel-buffering'] = 'no';
  res.writeHead(200, headers);
  return res;
}

/** Takes over a reply as an SSE response (headers set by hooks are kept) and says hello. */
export function openSseResponse(reply: FastifyReply): FastifyReply['raw'] {
  const res = startSse(reply);
  res.write(HELLO);
  return res;
}

/** True when the last of `types` that ends or resumes a run ends it: a whole log like that is of a run ended for good. */
function endsRun(types: readonly string[]): boolean {
  for (let i = types.length - 1; i >= 0; i--) {
    const type = types[i] as string;
    if (type === 'resumed') return false;
    if ((STREAM_END_EVENTS as readonly string[]).includes(type)) return true;
  }
  return false;
}

/** `heartbeatMs`: how often a stream left open carries a `: keep-alive` comment (`HostConfig.sseHeartbeatMs`). */
export async function streamRun(log: EventLog, runId: string, afterSeq: number, request: FastifyRequest, reply: FastifyReply, heartbeatMs: number): Promise<void> {
  // without a cursor there is always something to send (a run's log starts with run_created)
  const done = afterSeq > 0 ? await log.finished(runId) : undefined;
  if (done && afterSeq >= done.lastSeq) {
    await reply.code(204).send();
    return;
  }
  // From here to the subscription nothing awaits: the frames kept now are those the replay sends.
  const kept = log.recentAfter(runId, afterSeq);
  // A whole log that ends the run: the hello and the replay are the whole answer, in one write
  // (nothing can follow, so there is nothing to subscribe to)
  if (kept && afterSeq === 0 && endsRun(kept.types)) {
    startSse(reply).end(Buffer.concat([HELLO_BYTES, kept.bytes], HELLO_BYTES.length + kept.bytes.length));
    return;
  }
  const res = openSseResponse(reply);
  let last = afterSeq;
  let ended = false;
  const buffered: RunEvent[] = [];
  let replaying = true;
  const end = () => {
    if (ended) return;
    ended = true;
    unsubscribe();
    if (beat) clearInterval(beat);
    if (gapTimer) clearTimeout(gapTimer);
    res.end();
  };
  // the last terminal or `resumed` event sent: with the whole log replayed, it says whether the run has ended
  let mark: string | undefined;
  // The frames of a replay are gathered and written at once (one chunk, one socket write).
  let batch: string[] | undefined;
  const flush = () => {
    if (batch?.length && !ended) res.write(batch.length === 1 ? batch[0] : batch.join(''));
    batch = undefined;
  };
  const sendText = (seq: number, type: string, text: string, skipEnd: boolean) => {
    if (ended || seq <= last) return;
    last = seq;
    const ends = (STREAM_END_EVENTS as readonly string[]).includes(type);
    if (ends || type === 'resumed') mark = type;
    if (batch) batch.push(text);
    else res.write(text);
    if (!skipEnd && ends) end();
  };
  const send = (e: RunEvent, skipEnd: boolean) => {
    if (!ended && e.seq > last) sendText(e.seq, e.type, frame(e), skipEnd);
  };
  const sendStored = (r: StoredEvent, skipEnd: boolean) => {
    if (!ended && r.seq > last) sendText(r.seq, r.type, storedFrame(r), skipEnd);
  };
  // Live events can arrive out of order when two commits race to publish: hold a later event
  // until the gap fills, or read the gap from the log after a short wait.
  const early = new Map<number, RunEvent>();
  let gapTimer: NodeJS.Timeout | undefined;
  const deliver = (e: RunEvent) => {
    if (e.seq <= last) return;
    early.set(e.seq, e);
    for (let next = early.get(last + 1); next; next = early.get(last + 1)) {
      early.delete(next.seq);
      send(next, false);
    }
    if (early.size > 0 && !gapTimer && !ended) {
      gapTimer = setTimeout(() => {
        gapTimer = undefined;
        void log.readRows(runId, last, 5000).then((page) => {
          for (const p of page) early.delete(p.seq), sendStored(p, false);
        });
      }, 50);
    }
  };
  const unsubscribe = log.subscribe(
    runId,
    (e) => {
      if (replaying) buffered.push(e);
      else deliver(e);
    },
    afterSeq,
  );
  // the heartbeat starts once the replay leaves the stream open (a replay that ends it makes none)
  let beat: NodeJS.Timeout | undefined;
  const keepAlive = () => {
    if (!ended) beat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
  };
  request.raw.on('close', end);
  try {
    // a terminal event in the replay may be followed by a resume: the end is decided below
    if (kept) {
      // the frames as kept, in one write; the types tell where the replay leaves the run
      kept.types.forEach((type, i) => {
        const seq = kept.first + i;
        if (seq <= last) return;
        last = seq;
        if (type === 'resumed' || (STREAM_END_EVENTS as readonly string[]).includes(type)) mark = type;
      });
      if (!ended && kept.bytes.length > 0) res.write(kept.bytes);
    } else
      for (;;) {
        const page = await log.readRows(runId, last, 5000);
        batch = [];
        for (const r of page) sendStored(r, true);
        flush();
        if (page.length < 5000 || ended) break;
      }
  } finally {
    flush();
    replaying = false;
  }
  for (const e of buffered.splice(0)) deliver(e);
  if (ended) return;
  if (afterSeq === 0 && early.size === 0) {
    // every event up to `last` was sent: the run has ended when the last of them to end or resume it ended it
    if (mark && mark !== 'resumed') end();
    keepAlive();
    return;
  }
  const after = await log.finished(runId);
  if (after && last >= after.endSeq) end();
  keepAlive();
}
