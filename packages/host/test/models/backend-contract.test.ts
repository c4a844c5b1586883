import { beforeAll, describe, expect, it } from 'vitest';
import { chat, framesOf } from '../chat/chat-client';
import { scriptedHost } from '../support/scripted-host';

/**
 * One contract every model backend passes (STYLE: shared suites for multi-implementation seams):
 * streamed text, a tool-call round trip, and plan drafting, over the real provider packages.
 */

const { t, llm } = scriptedHost();

const providers = [
  { provider: 'openai-compatible', auth: (h: Record<string, unknown>) => h.authorization, expected: 'Bearer sk-contract' },
  { provider: 'openai', auth: (h: Record<string, unknown>) => h.authorization, expected: 'Bearer sk-contract' },
  { provider: 'anthropic', auth: (h: Record<string, unknown>) => h['x-api-key'], expected: 'sk-contract' },
] as const;

describe.each(providers)('backend contract: $provider', ({ provider, auth, expected }) => {
  beforeAll(async () => {
    const res = await t.api('PATCH', '/api/settings', { backends: [{ id: provider, provider, baseURL: llm.url, model: 'scripted-model', apiKey: 'sk-contract' }], defaultBackend: provider });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  it('streams text token by token with the stored key', async () => {
    llm.push({ text: 'one two three four' });
    const r = await chat(t, { message: 'count' });
    expect(framesOf(r, 'token').map((f) => f.data.text)).toEqual(['one ', 'two ', 'three ', 'four']);
    expect(r.frames.at(-1)?.data.text).toBe('one two three four');
    expect(auth(llm.headers.at(-1) as Record<string, unknown>)).toBe(expected);
  });

  it('round-trips a tool call: the result goes back to the model', async () => {
    let second = '';
    llm.push({ toolCalls: [{ name: 'echo', arguments: { text: 'contract-ping' } }] }, (req) => {
      second = JSON.stringify(req.messages);
      return { text: 'pong' };
    });
    const r = await chat(t, { message: 'ping' });
    expect(framesOf(r, 'tool').map((f) => f.data.phase)).toEqual(['call', 'result']);
    expect(framesOf(r, 'tool')[1]?.data.result.echoed).toBe('contract-ping');
    expect(second).toContain('contract-ping');
    expect(r.frames.at(-1)?.data.text).toBe('pong');
  });

  it('drafts a plan with no tools offered', async () => {
    llm.push({ text: JSON.stringify({ steps: [{ id: 'a', tool: 'noop' }] }) }, { text: 'All done.' });
    const start = llm.requests.length;
    const res = await t.api('POST', '/api/agent/run', { goal: 'contract goal', config: { planApproval: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.filter((e) => e.type === 'plan_token').length).toBeGreaterThan(0);
    expect(events.at(-1)?.data.summary).toBe('All done.');
    expect(llm.requests[start]?.tools).toBeUndefined();
    expect(JSON.stringify(llm.requests[start])).toContain('contract goal');
  });
});
