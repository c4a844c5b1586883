import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { scriptedHost } from '../support/scripted-host';

/** Backend API keys never reach the host log, at the most verbose level, on success or failure. */

const KEY = 'sk-log-probe-4242';
const lines: string[] = [];

const { t, llm } = scriptedHost({ host: () => ({ logger: pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) }) }) });

describe('backend keys and the log', () => {
  it('never logs the key: settings patch, a planned run, a failing backend, chat', async () => {
    const patched = await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted', apiKey: KEY }], defaultBackend: 'local' });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    llm.push({ text: `\`\`\`json\n${JSON.stringify({ steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] })}\n\`\`\`` }, { text: 'done' });
    const ok = await t.api('POST', '/api/agent/run', { goal: 'echo one', config: { planApproval: false } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await t.stream(ok.body.runId)).at(-1)?.type).toBe('complete');
    llm.push({ error: { status: 401, message: 'bad key' } });
    const bad = await t.api('POST', '/api/agent/run', { goal: 'backend refuses', config: { planApproval: false } });
    expect((await t.stream(bad.body.runId)).at(-1)?.type).toBe('error');
    llm.push({ error: { status: 500, message: 'boom' } });
    const chat = await fetch(`${t.host.url}/api/chat`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hi' }) });
    await chat.text();
    expect(llm.pending()).toBe(0);
    expect(llm.headers.some((h) => h.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(KEY))).toEqual([]);
  });
});
