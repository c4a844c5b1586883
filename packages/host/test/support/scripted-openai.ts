import { once } from 'node:events';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible server for tests: a real node http server on 127.0.0.1 speaking
 * `POST /v1/chat/completions` (streaming SSE and plain JSON) and `GET /v1/models` — and, from the
 * same script, Anthropic's `POST /v1/messages` (so one test suite can drive every provider;
 * those request bodies are recorded as Anthropic sent them: `system` on top, content blocks). Each
 * completion request consumes the next prepared turn, so a test states exactly what "the model"
 * says and which tools it calls, and then inspects what the client sent.
 *
 * ```ts
 * const llm = await startScriptedOpenAI();
 * llm.push({ text: 'Hello there' });                                   // a text answer, streamed word by word
 * llm.push({ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }); // a tool-call turn
 * llm.push((req) => ({ text: `you sent ${req.messages.length} messages` })); // computed from the request
 * // settings: { provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }
 * llm.requests;   // every request body received, in order
 * await llm.close();
 * ```
 *
 * A request with no turn left gets HTTP 500 `{"error":{"message":"scripted-openai: no turn left"}}`.
 * Remember that with a backend configured, every completed agent run asks the model for its
 * summary (one more turn, e.g. `{ text: 'summary' }`); without that turn the run still completes
 * with the plain summary.
 */

export interface ScriptedToolCall {
  name: string;
  /** An object (JSON-encoded for the wire) or a raw string (sent verbatim, e.g. broken JSON). */
  arguments: Record<string, unknown> | string;
  /** Defaults to `call_<n>`. */
  id?: string;
}

export interface ScriptedTurn {
  /** Answer text. A string is streamed in word-sized chunks; an array is streamed chunk by chunk. */
  text?: string | string[];
  toolCalls?: ScriptedToolCall[];
  /** Defaults to `tool_calls` when `toolCalls` is set, else `stop`. */
  finishReason?: 'stop' | 'length' | 'tool_calls';
  /** Answer with this HTTP error instead of a completion. */
  error?: { status: number; message: string };
  /** Pause before each streamed chunk (ms), to let a test observe streaming or cancel mid-way. */
  chunkDelayMs?: number;
}

/** The parsed request body of a chat completion, as the client sent it. */
export interface ChatRequestBody {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  [key: string]: unknown;
}

export type TurnSource = ScriptedTurn | ((req: ChatRequestBody) => ScriptedTurn);

export interface ScriptedOpenAI {
  /** Base URL including `/v1`, ready for a backend's `baseURL`. */
  readonly url: string;
  /** Every completion request body, in arrival order. */
  readonly requests: ChatRequestBody[];
  /** Headers of every completion request (e.g. to check the Authorization header). */
  readonly headers: IncomingMessage['headers'][];
  /** Appends turns to the script. */
  push(...turns: TurnSource[]): void;
  /** Number of turns not yet consumed. */
  pending(): number;
  close(): Promise<void>;
}

export async function startScriptedOpenAI(turns: TurnSource[] = []): Promise<ScriptedOpenAI> {
  const queue: TurnSource[] = [...turns];
  const requests: ChatRequestBody[] = [];
  const headers: IncomingMessage['headers'][] = [];
  let callCounter = 0;
  let completionCounter = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      return json(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model' }] });
    }
    if (req.method === 'POST' && path === '/v1/messages') return anthropic(req, res);
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return json(res, 404, { error: { message: `scripted-openai: no route ${req.method} ${path}` } });
    }
    const body = JSON.parse(await readBody(req)) as ChatRequestBody;
    requests.push(body);
    headers.push(req.headers);
    const next = queue.shift();
    if (!next) return json(res, 500, { error: { message: 'scripted-openai: no turn left' } });
    const turn = typeof next === 'function' ? next(body) : next;
    if (turn.error) return json(res, turn.error.status, { error: { message: turn.error.message, type: 'scripted' } });
    const calls = (turn.toolCalls ?? []).map((c) => ({
      id: c.id ?? `call_${++callCounter}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    const finish = turn.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop');
    const id = `chatcmpl-${++completionCounter}`;
    const chunks = typeof turn.text === 'string' ? splitWords(turn.text) : (turn.text ?? []);
    if (body.stream) return stream(res, { id, model: body.model, chunks, calls, finish, delay: turn.chunkDelayMs ?? 0 });
    return json(res, 200, {
      id,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: chunks.length > 0 ? chunks.join('') : null,
            ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
          },
          finish_reason: finish,
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    });
  }

  /** The same script over Anthropic's Messages API (`@ai-sdk/anthropic` with `baseURL: url`). */
  async function anthropic(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(req)) as ChatRequestBody;
    requests.push(body);
    headers.push(req.headers);
    const next = queue.shift();
    if (!next) return json(res, 500, { type: 'error', error: { type: 'api_error', message: 'scripted-openai: no turn left' } });
    const turn = typeof next === 'function' ? next(body) : next;
    if (turn.error) return json(res, turn.error.status, { type: 'error', error: { type: 'invalid_request_error', message: turn.error.message } });
    const calls = (turn.toolCalls ?? []).map((c) => ({
      id: c.id ?? `toolu_${++callCounter}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    }));
    const chunks = typeof turn.text === 'string' ? splitWords(turn.text) : (turn.text ?? []);
    const stop = calls.length > 0 ? 'tool_use' : turn.finishReason === 'length' ? 'max_tokens' : 'end_turn';
    const id = `msg_${++completionCounter}`;
    if (!body.stream) {
      const content = [
        ...(chunks.length ? [{ type: 'text', text: chunks.join('') }] : []),
        ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) as unknown })),
      ];
      return json(res, 200, { id, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 10 } });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = async (event: string, data: Record<string, unknown>) => {
      if (turn.chunkDelayMs) await new Promise((r) => setTimeout(r, turn.chunkDelayMs));
      if (!res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    };
    await send('message_start', { message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } });
    let index = 0;
    if (chunks.length) {
      await send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const text of chunks) await send('content_block_delta', { index, delta: { type: 'text_delta', text } });
      await send('content_block_stop', { index: index++ });
    }
    for (const c of calls) {
      await send('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      for (const part of splitInHalf(c.arguments)) await send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
      await send('content_block_stop', { index: index++ });
    }
    await send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } });
    await send('message_stop', {});
    res.end();
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    push: (...more) => {
      queue.push(...more);
    },
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface StreamPlan {
  id: string;
  model: string;
  chunks: string[];
  calls: Array<{ id: string; name: string; arguments: string }>;
  finish: string;
  delay: number;
}

async function stream(res: ServerResponse, p: StreamPlan): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const frame = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: p.id, object: 'chat.completion.chunk', created: 1_700_000_000, model: p.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const write = async (text: string) => {
    if (p.delay > 0) await new Promise((r) => setTimeout(r, p.delay));
    if (!res.destroyed) res.write(text);
  };
  await write(frame({ role: 'assistant', content: '' }, null));
  for (const chunk of p.chunks) await write(frame({ content: chunk }, null));
  for (const [index, call] of p.calls.entries()) {
    await write(frame({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null));
    for (const part of splitInHalf(call.arguments)) {
      await write(frame({ tool_calls: [{ index, function: { arguments: part } }] }, null));
    }
  }
  await write(frame({}, p.finish, { usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } }));
  await write('data: [DONE]\n\n');
  res.end();
}

/** Splits text into word-sized chunks that keep their whitespace ("a b" → ["a ", "b"]). */
export function splitWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function splitInHalf(text: string): string[] {
  if (text.length < 2) return [text];
  const mid = Math.floor(text.length / 2);
  return [text.slice(0, mid), text.slice(mid)];
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
