import { applyEvent, initialRun, type RawEvent, type RunView, STREAM_EVENT_TYPES } from './run-state';

/**
 * Follows one run over SSE (`GET /api/agent/stream?runId&token`). The browser's EventSource
 * reconnects on its own with Last-Event-ID; the stream is closed here once the run has ended.
 */

export interface RunFollower {
  close(): void;
}

/**
 * The one EventSource wrapper for run streams: listens to `types`, parses each frame's JSON (a
 * frame that is not JSON is dropped) and takes the event's `seq` from the SSE id when the data has
 * none. The client never closes the stream on a terminal event: the replay of a resumed run holds
 * the earlier terminal event before `resumed`. The host ends the stream after the run's real end
 * and answers the reconnection that follows (cursor at the last event) with 204, which stops it.
 */
export function openRunEvents(url: string, types: readonly string[], onEvent: (event: RawEvent) => void, Source: typeof EventSource = EventSource): EventSource {
  const es = new Source(url);
  for (const type of types) {
    es.addEventListener(type, ((msg: MessageEvent) => {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(msg.data);
      } catch {
        return;
      }
      const event: RawEvent = { ...data, type };
      if (typeof event.seq !== 'number' && msg.lastEventId) event.seq = Number(msg.lastEventId);
      onEvent(event);
    }) as EventListener);
  }
  return es;
}

export function followRun(url: string, runId: string, onView: (view: RunView) => void, Source: typeof EventSource = EventSource): RunFollower {
  let view = initialRun(runId);
  const es = openRunEvents(
    url,
    STREAM_EVENT_TYPES,
    (event) => {
      view = applyEvent(view, event);
      onView(view);
    },
    Source,
  );
  return { close: () => es.close() };
}
