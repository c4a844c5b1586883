import type { TestHost } from '../support/host';

/** A minimal client for POST /api/chat: reads the SSE answer frame by frame over real HTTP. */

export interface ChatFrame {
  event: string;
  id: string;
  data: any;
}

export interface ChatReply {
  status: number;
  /** Parsed JSON body when the answer is not a stream (an error before streaming started). */
  body?: any;
  frames: ChatFrame[];
}

export async function chat(t: TestHost, body: unknown, onFrame?: (f: ChatFrame) => void | Promise<void>, token = t.host.token, signal?: AbortSignal): Promise<ChatReply> {
  const res = await fetch(`${t.host.url}/api/chat`, {
    method: 'POST',
    signal,
    headers: { 'x-fengyu-token': token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { status: res.status, body: await res.json(), frames: [] };
  }
  const frames: ChatFrame[] = [];
  try {
    await readFrames(res, frames, onFrame);
  } catch (err) {
    if (!signal?.aborted) throw err;
  }
  return { status: res.status, frames };
}

async function readFrames(res: Response, frames: ChatFrame[], onFrame?: (f: ChatFrame) => void | Promise<void>): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const raw = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf('\n\n');
      const f: Partial<ChatFrame> = {};
      for (const line of raw.split('\n')) {
        if (line.startsWith('event: ')) f.event = line.slice(7);
        else if (line.startsWith('id: ')) f.id = line.slice(4);
        else if (line.startsWith('data: ')) f.data = JSON.parse(line.slice(6));
      }
      if (!f.event) continue;
      frames.push(f as ChatFrame);
      await onFrame?.(f as ChatFrame);
    }
  }
}

export const framesOf = (r: ChatReply, event: string) => r.frames.filter((f) => f.event === event);
