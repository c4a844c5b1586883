import type { ConversationSummary, PermissionMode } from '@fengyu/protocol';
import type { ApiClient, ConnectionStatus } from '../../api/client';
import { ApiError } from '../../api/client';
import { createSseParser } from './sse-parser';

/** AI Chat (models domain): conversations, the streamed answer of `POST /api/chat`, confirmation cards. */

export interface FileEntry {
  name: string;
  refs?: string[];
  nativePath?: string;
  access?: 'read' | 'write';
}

export interface SendBody {
  conversationId?: string;
  message: string;
  backend?: string;
  permissionMode?: PermissionMode;
  files?: FileEntry[];
}

/** The body of one AI-panel turn: a chat message plus a snapshot of the live canvas. */
export interface AssistBody extends SendBody {
  canvas: { graph: unknown; workflowId?: string; revision?: number; name?: string; description?: string; goal?: string; diagnostics?: unknown[]; lastRunError?: string };
}

export type FrameHandler = (frame: string, data: Record<string, unknown>) => void;

const enc = encodeURIComponent;

/** A file entry name the host accepts (`^[A-Za-z][A-Za-z0-9_-]{0,63}$`), unique among `taken`. */
export function entryName(fileName: string, taken: ReadonlySet<string>): string {
  const base = fileName.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^[^A-Za-z]+/, '');
  const stem = (base ? base : 'file').slice(0, 56);
  let name = stem;
  for (let i = 2; taken.has(name); i++) name = `${stem}_${i}`;
  return name;
}

export function chatApi(api: ApiClient, opts: { token: () => string | undefined; locale: () => string; onStatus: (s: ConnectionStatus) => void }) {
/** POSTs a body and reads the answer's SSE frames until the stream ends. */
async function stream(path: string, body: unknown, onFrame: FrameHandler, signal: AbortSignal): Promise<void> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'Accept-Language': opts.locale() };
    const token = opts.token();
    if (token) headers['X-FengYu-Token'] = token;
    let res: Response;
    try {
      res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), signal });
    } catch (cause) {
      if ((cause as Error).name === 'AbortError') throw cause;
      opts.onStatus('unreachable');
      throw new ApiError(0, 'host_unreachable', 'The FengYu host cannot be reached.');
    }
    if (res.status === 401) opts.onStatus('unauthorized');
    else opts.onStatus('ok');
    if (!res.ok || !res.body) {
      let e: { error?: { code?: string; message?: string; details?: unknown } } = {};
      try {
        e = await res.json();
      } catch {}
      throw new ApiError(res.status, e.error?.code ?? `http_${res.status}`, e.error?.message ?? res.statusText, e.error?.details);
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = createSseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const f of parser.push(value)) {
        try {
          onFrame(f.event, JSON.parse(f.data));
        } catch {}
      }
    }
  }

  return {
    conversations: async () => (await api.get<{ conversations: ConversationSummary[] }>('/api/chat/conversations')).conversations ?? [],
    conversation: (id: string) => api.get<ConversationSummary & { messages: Array<{ role: string; text: string; message: { role: string; content: unknown } }> }>(`/api/chat/conversations/${enc(id)}`),
    remove: (id: string) => api.del<unknown>(`/api/chat/conversations/${enc(id)}`),
    answer: (conversationId: string, gateId: string, approve: boolean) => api.post<unknown>(`/api/chat/${enc(conversationId)}/approve`, { gateId, approve }),
    upload: (file: File) => api.upload<{ id: string; name: string; size: number }>('/api/files', file),
    workflows: async () => {
      const body = await api.get<unknown>('/api/workflows');
      const list = Array.isArray(body) ? body : ((body as { workflows?: unknown[] })?.workflows ?? []);
      return (list as Array<{ id: string; name: string; state: string }>).filter((w) => w.state === 'published');
    },
    backends: async () => {
      const s = await api.get<{ backends?: Array<{ id: string; model: string }>; defaultBackend?: string | null }>('/api/settings');
      return { backends: s.backends ?? [], defaultBackend: s.defaultBackend ?? undefined };
    },
    /** Sends one message; frames arrive through `onFrame` until the stream ends. */
    send: (body: SendBody, onFrame: FrameHandler, signal: AbortSignal) => stream('/api/chat', body, onFrame, signal),
    /** One turn of the builder's AI panel (a chat turn over a canvas snapshot); same frames plus `proposal`. */
    assist: (body: AssistBody, onFrame: FrameHandler, signal: AbortSignal) => stream('/api/builder/assist', body, onFrame, signal),
  };
}
