import { applyEvent, initialRun, type RawEvent, type RunView, STREAM_EVENT_TYPES } from './run-state';

/**
 * Follows one run over SSE (`GET /api/agent/stream?runId&token`). The browser's EventSource
 * reconnects on its own with Last-Event-ID; the stream is closed here once the run has ended.
 */

export interface RunFollower {
  close(): void;
}

export function followRun(url: string, runId: string, onView: (view: RunView) => void, Source: typeof EventSource = EventSource): RunFollower {
  let view = initialRun(runId);
  const es = new Source(url);
  const handle = (type: string) => (msg: MessageEvent) => {
    let data: Record<string, unknown> = {};
    try {
      data = JSON.parse(msg.data);
    } catch {
      return;
    }
    const event: RawEvent = { ...data, type };
    if (typeof event.seq !== 'number' && msg.lastEventId) event.seq = Number(msg.lastEventId);
    view = applyEvent(view, event);
    onView(view);
    if (view.ended) es.close();
  };
  for (const type of STREAM_EVENT_TYPES) es.addEventListener(type, handle(type) as EventListener);
  return { close: () => es.close() };
}
