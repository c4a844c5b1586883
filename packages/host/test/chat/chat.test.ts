import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { modeOnlyGuard } from '../../src/permissions/mode-default';
import { scriptedHost } from '../support/scripted-host';
import { chat, framesOf } from './chat-client';

const { t, llm } = scriptedHost();
beforeEach(() => {
  expect(llm.pending()).toBe(0);
  t.host.ctx.guard = modeOnlyGuard;
});

const configure = () =>
  t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }], defaultBackend: 'local' });

describe('chat without a backend', () => {
  it('answers 400 no_chat_backend as JSON before any stream starts', async () => {
    const r = await chat(t, { message: 'hello' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('no_chat_backend');
    expect(llm.requests).toHaveLength(0);
  });
});

describe('chat', () => {
  beforeAll(async () => {
    expect((await configure()).status).toBe(200);
  });

  it('streams tokens and done, and persists the conversation', async () => {
    llm.push({ text: 'Hello! How can I help you today?' });
    const r = await chat(t, { message: 'hi there' });
    expect(r.status).toBe(200);
    expect(r.frames[0]?.event).toBe('start');
    const tokens = framesOf(r, 'token');
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.map((f) => f.data.text).join('')).toBe('Hello! How can I help you today?');
    const done = r.frames.at(-1);
    expect(done?.event).toBe('done');
    expect(done?.data.text).toBe('Hello! How can I help you today?');
    const id = done?.data.conversationId as string;

    const list = await t.api('GET', '/api/chat/conversations');
    expect(list.body.conversations.map((c: { id: string }) => c.id)).toContain(id);
    const conv = await t.api('GET', `/api/chat/conversations/${id}`);
    expect(conv.body.title).toBe('hi there');
    expect(conv.body.messages.map((m: { role: string; text: string }) => [m.role, m.text])).toEqual([
      ['user', 'hi there'],
      ['assistant', 'Hello! How can I help you today?'],
    ]);

    llm.push({ text: 'You said hi.' });
    const next = await chat(t, { conversationId: id, message: 'what did I say?' });
    expect(next.frames.at(-1)?.event).toBe('done');
    const sent = llm.requests.at(-1)?.messages.map((m) => m.role);
    expect(sent).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('calls catalog tools with tool frames, read tools without approval', async () => {
    llm.push({ toolCalls: [{ name: 'echo', arguments: { text: 'ping' } }] }, { text: 'The echo said ping.' });
    const r = await chat(t, { message: 'echo ping' });
    const tools = framesOf(r, 'tool');
    expect(tools.map((f) => f.data.phase)).toEqual(['call', 'result']);
    expect(tools[0]?.data).toMatchObject({ name: 'echo', arguments: { text: 'ping' } });
    expect(tools[1]?.data.result.echoed).toBe('ping');
    expect(framesOf(r, 'approval_requested')).toHaveLength(0);
    expect(r.frames.at(-1)?.data.text).toBe('The echo said ping.');
    const conv = await t.api('GET', `/api/chat/conversations/${r.frames.at(-1)?.data.conversationId}`);
    expect(conv.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('asks before write/external calls in ask mode: approve runs it, reject returns a denial to the model', async () => {
    const before = t.tools.calls.get('send_message') ?? 0;
    llm.push({ toolCalls: [{ name: 'send_message', arguments: { to: 'alice' } }] }, { text: 'Sent.' });
    const approved = await chat(t, { message: 'message alice' }, async (f) => {
      if (f.event !== 'approval_requested') return;
      expect(f.data).toMatchObject({ tool: 'send_message', arguments: { to: 'alice' }, effect: 'external' });
      const res = await t.api('POST', `/api/chat/${f.data.conversationId}/approve`, { gateId: f.data.gateId, approve: true });
      expect(res.status).toBe(200);
      const again = await t.api('POST', `/api/chat/${f.data.conversationId}/approve`, { gateId: f.data.gateId, approve: true });
      expect(again.status).toBe(409);
    });
    expect(framesOf(approved, 'approval_requested')).toHaveLength(1);
    expect(t.tools.calls.get('send_message')).toBe(before + 1);
    expect(approved.frames.at(-1)?.event).toBe('done');

    let denial = '';
    llm.push({ toolCalls: [{ name: 'send_message', arguments: { to: 'mallory' } }] }, (req) => {
      denial = JSON.stringify(req.messages.at(-1));
      return { text: 'OK, not sending.' };
    });
    const rejected = await chat(t, { message: 'message mallory' }, async (f) => {
      if (f.event === 'approval_requested') await t.api('POST', `/api/chat/${f.data.conversationId}/approve`, { gateId: f.data.gateId, approve: false });
    });
    expect(t.tools.calls.get('send_message')).toBe(before + 1);
    expect(denial).toContain('denied:');
    expect(framesOf(rejected, 'tool').at(-1)?.data.error).toMatch(/^denied:/);
  });

  it('a client that disconnects while an approval is open rejects it and frees the conversation', async () => {
    const before = t.tools.calls.get('send_message') ?? 0;
    llm.push({ toolCalls: [{ name: 'send_message', arguments: { to: 'eve' } }] });
    const abort = new AbortController();
    let conversationId = '';
    let gateId = '';
    await chat(
      t,
      { message: 'message eve' },
      (f) => {
        if (f.event === 'start') conversationId = f.data.conversationId;
        if (f.event === 'approval_requested') {
          gateId = f.data.gateId;
          abort.abort();
        }
      },
      t.host.token,
      abort.signal,
    );
    expect(gateId).not.toBe('');
    // the conversation stays busy until the aborted turn has rejected its gate and ended
    llm.push({ text: 'Still here.' });
    let next = await chat(t, { conversationId, message: 'hello again' });
    for (let i = 0; i < 100 && next.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 20));
      next = await chat(t, { conversationId, message: 'hello again' });
    }
    expect(next.frames.at(-1)?.event).toBe('done');
    const late = await t.api('POST', `/api/chat/${conversationId}/approve`, { gateId, approve: true });
    expect(late.status).toBe(409);
    expect(t.tools.calls.get('send_message') ?? 0).toBe(before);
  });

  it('does not ask in full-access mode', async () => {
    llm.push({ toolCalls: [{ name: 'write_note', arguments: { text: 'n' } }] }, { text: 'Written.' });
    const r = await chat(t, { message: 'write', permissionMode: 'full-access' });
    expect(framesOf(r, 'approval_requested')).toHaveLength(0);
    expect(framesOf(r, 'tool')[1]?.data.result).toEqual({ written: 'n' });
  });

  it('streams an error frame when the backend fails mid-answer', async () => {
    llm.push({ error: { status: 400, message: 'bad request from scripted' } });
    const r = await chat(t, { message: 'fail please' });
    const last = r.frames.at(-1);
    expect(last?.event).toBe('error');
    expect(last?.data.message).toContain('bad request from scripted');
    expect(last?.data.code).toBe('model_failed');
  });

  it('keeps conversations per owner and deletes them', async () => {
    llm.push({ text: 'mine' });
    const r = await chat(t, { message: 'private' });
    const id = r.frames.at(-1)?.data.conversationId as string;
    const other = await t.api('POST', '/api/owners', { name: 'bob' });
    expect(other.status).toBe(200);
    const headers = { 'x-fengyu-token': other.body.token };
    expect((await t.api('GET', `/api/chat/conversations/${id}`, undefined, headers)).status).toBe(404);
    expect((await t.api('GET', '/api/chat/conversations', undefined, headers)).body.conversations).toEqual([]);
    expect((await t.api('DELETE', `/api/chat/conversations/${id}`, undefined, headers)).status).toBe(404);
    const bobChat = await chat(t, { conversationId: id, message: 'let me in' }, undefined, other.body.token);
    expect(bobChat.status).toBe(400); // bob has no backend configured: refused before looking
    expect((await t.api('DELETE', `/api/chat/conversations/${id}`)).status).toBe(200);
    expect((await t.api('GET', `/api/chat/conversations/${id}`)).status).toBe(404);
  });

  it('documents every chat route in the OpenAPI document', async () => {
    const doc = await t.api('GET', '/api/openapi.json');
    for (const [path, method] of [
      ['/api/chat', 'post'],
      ['/api/chat/conversations', 'get'],
      ['/api/chat/conversations/{id}', 'get'],
      ['/api/chat/conversations/{id}', 'delete'],
      ['/api/chat/{id}/approve', 'post'],
    ] as const) {
      expect(doc.body.paths[path]?.[method]?.summary, `${method} ${path}`).toBeTruthy();
    }
  });

  it('rejects hostile or malformed requests', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{}, 400, 'invalid_request'],
      [{ message: '' }, 400, 'invalid_request'],
      [{ message: 'x', permissionMode: 'root' }, 400, 'invalid_request'],
      [{ message: 'x', extra: true }, 400, 'invalid_request'],
      [{ message: 'x', conversationId: 'no-such-conversation' }, 404, 'conversation_not_found'],
      [{ message: 'x', backend: 'nope' }, 400, 'unknown_backend'],
    ];
    for (const [body, status, code] of cases) {
      const r = await chat(t, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error.code, JSON.stringify(body)).toBe(code);
    }
    const gate = await t.api('POST', '/api/chat/whatever/approve', { gateId: 'nope', approve: true });
    expect(gate.status).toBe(409);
    expect(gate.body.error.code).toBe('chat_no_pending_gate');
    expect((await t.api('POST', '/api/chat/whatever/approve', { gateId: 'nope' })).status).toBe(400);
  });
});
