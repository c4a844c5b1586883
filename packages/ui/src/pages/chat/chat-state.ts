/**
 * The chat transcript as a pure fold: stored messages (AI SDK `ModelMessage`s from
 * `GET /api/chat/conversations/{id}`) and live frames (`start`, `token`, `tool`,
 * `approval_requested`, `done`, `error`) both become the same list of items.
 */

export interface ToolItem {
  kind: 'tool';
  callId: string;
  name: string;
  arguments?: unknown;
  result?: unknown;
  error?: string;
  done: boolean;
}

export interface ApprovalItem {
  kind: 'approval';
  gateId: string;
  callId?: string;
  tool: string;
  arguments?: unknown;
  effect?: string;
  reason?: string;
  answer?: 'approved' | 'rejected';
}

export type ChatItem = { kind: 'user'; text: string; files?: string[] } | { kind: 'assistant'; text: string; streaming?: boolean } | { kind: 'error'; text: string } | ToolItem | ApprovalItem;

type Part = { type?: string; text?: string; toolCallId?: string; toolName?: string; input?: unknown; args?: unknown; output?: unknown; result?: unknown };

function unwrapOutput(output: unknown): { result?: unknown; error?: string } {
  if (output && typeof output === 'object' && 'type' in output) {
    const o = output as { type: string; value?: unknown };
    if (o.type === 'error-text' || o.type === 'error-json') return { error: typeof o.value === 'string' ? o.value : JSON.stringify(o.value) };
    return { result: o.value };
  }
  return { result: output };
}

/** Items of stored messages (user / assistant text and tool-call / tool-result parts). */
export function itemsFromMessages(messages: ReadonlyArray<{ message?: { role?: string; content?: unknown }; role?: string; text?: string }>): ChatItem[] {
  const items: ChatItem[] = [];
  const calls = new Map<string, ToolItem>();
  for (const m of messages) {
    const role = m.message?.role ?? m.role;
    const content = m.message?.content ?? m.text;
    const parts: Part[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? (content as Part[]) : [];
    for (const p of parts) {
      if (p.type === 'text' && p.text) {
        if (role === 'user') items.push({ kind: 'user', text: p.text });
        else if (role === 'assistant') items.push({ kind: 'assistant', text: p.text });
      } else if (p.type === 'tool-call') {
        const item: ToolItem = { kind: 'tool', callId: String(p.toolCallId ?? ''), name: String(p.toolName ?? ''), arguments: p.input ?? p.args, done: false };
        calls.set(item.callId, item);
        items.push(item);
      } else if (p.type === 'tool-result') {
        const item = calls.get(String(p.toolCallId ?? ''));
        const out = unwrapOutput(p.output ?? p.result);
        if (item) Object.assign(item, out, { done: true });
        else items.push({ kind: 'tool', callId: String(p.toolCallId ?? ''), name: String(p.toolName ?? ''), ...out, done: true });
      }
    }
  }
  return items;
}

/** Applies one live frame to the transcript (returns a new list). */
export function applyFrame(items: readonly ChatItem[], frame: string, data: Record<string, unknown>): ChatItem[] {
  const next = [...items];
  const last = next[next.length - 1];
  switch (frame) {
    case 'token': {
      const text = typeof data.text === 'string' ? data.text : '';
      if (last?.kind === 'assistant' && last.streaming) next[next.length - 1] = { ...last, text: last.text + text };
      else next.push({ kind: 'assistant', text, streaming: true });
      return next;
    }
    case 'tool': {
      const callId = String(data.callId ?? '');
      const name = String(data.name ?? '');
      if (data.phase === 'call') {
        next.push({ kind: 'tool', callId, name, arguments: data.arguments, done: false });
        return next;
      }
      const i = next.findIndex((x) => x.kind === 'tool' && !x.done && (callId ? x.callId === callId : x.name === name));
      const base: ToolItem = i >= 0 ? (next[i] as ToolItem) : { kind: 'tool', callId, name, done: false };
      const updated: ToolItem = { ...base, done: true, ...(typeof data.error === 'string' ? { error: data.error } : { result: data.result }) };
      if (i >= 0) next[i] = updated;
      else next.push(updated);
      return next;
    }
    case 'approval_requested':
      next.push({ kind: 'approval', gateId: String(data.gateId), callId: typeof data.callId === 'string' ? data.callId : undefined, tool: String(data.tool ?? ''), arguments: data.arguments, effect: typeof data.effect === 'string' ? data.effect : undefined, reason: typeof data.reason === 'string' ? data.reason : undefined });
      return next;
    case 'done':
      return next.map((x) => (x.kind === 'assistant' && x.streaming ? { kind: 'assistant', text: x.text } : x));
    case 'error':
      return [...next.map((x) => (x.kind === 'assistant' && x.streaming ? { kind: 'assistant' as const, text: x.text } : x)), { kind: 'error', text: String(data.message ?? '') }];
    default:
      return next;
  }
}

/** Marks an approval card answered. */
export function answerApproval(items: readonly ChatItem[], gateId: string, approved: boolean): ChatItem[] {
  return items.map((x) => (x.kind === 'approval' && x.gateId === gateId ? { ...x, answer: approved ? 'approved' : 'rejected' } : x));
}
