import { describe, expect, it } from 'vitest';
import { auto } from '../support/host';
import { scriptedHost } from '../support/scripted-host';
import { chat } from '../chat/chat-client';

const DAY = 86_400_000;
let now = Date.UTC(2026, 0, 1);

const { t, llm } = scriptedHost({
  host: () => ({ clock: { now: () => now } }),
  setup: async () => {
    await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }] });
  },
});

const toolNames = async (headers?: Record<string, string>) => {
  const res = await t.api('GET', '/api/agent/tools', undefined, headers);
  const list = (Array.isArray(res.body) ? res.body : res.body.tools) as Array<{ name: string }>;
  return list.map((x) => x.name);
};

const runSteps = async (steps: unknown[]) => {
  llm.push({ text: 'summary' }); // a backend is configured, so completed runs get a model summary
  const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const events = await t.stream(res.body.runId);
  expect(events.at(-1)?.type, JSON.stringify(events.at(-1))).toBe('complete');
  expect(llm.pending()).toBe(0);
  return events;
};

describe('cross-session memory', () => {
  it('is off by default: the setting is false and no memory tool is listed', async () => {
    expect((await t.api('GET', '/api/settings')).body.memory).toEqual({ enabled: false });
    expect((await toolNames()).filter((n) => n.startsWith('memory_'))).toEqual([]);
  });

  it('when enabled, the model remembers through chat and recalls into the planning context', async () => {
    expect((await t.api('PATCH', '/api/settings', { memory: { enabled: true } })).status).toBe(200);
    expect(await toolNames()).toEqual(expect.arrayContaining(['memory_remember', 'memory_search', 'memory_list', 'memory_forget']));

    llm.push({ toolCalls: [{ name: 'memory_remember', arguments: { content: 'Invoices are split by the Region column' } }] }, { text: 'Noted.' });
    const r = await chat(t, { message: 'remember that invoices are split by Region', permissionMode: 'full-access' });
    const result = r.frames.find((f) => f.event === 'tool' && f.data.phase === 'result');
    expect(result?.data.result.content).toBe('Invoices are split by the Region column');

    now += 3 * DAY;
    llm.push({ text: JSON.stringify({ steps: [{ id: 'a', tool: 'noop' }] }) }, { text: 'summary' });
    const start = llm.requests.length;
    const run = await t.api('POST', '/api/agent/run', { goal: 'split the invoices by region', config: { planApproval: false } });
    expect((await t.stream(run.body.runId)).at(-1)?.type).toBe('complete');
    expect(JSON.stringify(llm.requests[start]?.messages[0])).toContain('Invoices are split by the Region column');
  });

  it('ranks search results by overlap and a 7-day half-life (fixed clock)', async () => {
    await runSteps([{ id: 'r', tool: 'memory_remember', arguments: { content: 'Quarterly report totals go to finance' } }]);
    now += 7 * DAY;
    await runSteps([{ id: 'r', tool: 'memory_remember', arguments: { content: 'Report drafts live in the shared drive' } }]);
    const events = await runSteps([{ id: 's', tool: 'memory_search', arguments: { query: 'quarterly report totals', limit: 5 } }]);
    const found = events.find((e) => e.type === 'step_complete')?.data.result.memories as Array<{ content: string; score: number }>;
    // 3 words × 0.5 (7 days old) = 1.5 beats 1 word × 1 (new)
    expect(found.map((m) => m.content)).toEqual(['Quarterly report totals go to finance', 'Report drafts live in the shared drive']);
    expect(found[0]?.score).toBeCloseTo(1.5, 6);
    expect(found[1]?.score).toBeCloseTo(1, 6);
    now += 14 * DAY;
    const later = await runSteps([{ id: 's', tool: 'memory_search', arguments: { query: 'quarterly report totals' } }]);
    const again = later.find((e) => e.type === 'step_complete')?.data.result.memories as Array<{ score: number }>;
    expect(again[0]?.score).toBeCloseTo(3 * 0.125, 6);
    expect(again[1]?.score).toBeCloseTo(0.25, 6);
  });

  it('lists newest first, forgets by id, and keeps memories per owner', async () => {
    const listed = await runSteps([{ id: 'l', tool: 'memory_list', arguments: {} }]);
    const memories = listed.find((e) => e.type === 'step_complete')?.data.result.memories as Array<{ id: string; content: string }>;
    expect(memories[0]?.content).toBe('Report drafts live in the shared drive');
    const forgot = await runSteps([{ id: 'f', tool: 'memory_forget', arguments: { id: memories[0]?.id } }]);
    expect(forgot.find((e) => e.type === 'step_complete')?.data.result).toEqual({ forgotten: true });

    const bob = await t.api('POST', '/api/owners', { name: 'bob' });
    const headers = { 'x-fengyu-token': bob.body.token };
    expect((await toolNames(headers)).filter((n) => n.startsWith('memory_'))).toEqual([]);
    await t.api('PATCH', '/api/settings', { memory: { enabled: true } }, headers);
    const bobRun = async (step: unknown) => {
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [step] } }, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await t.host.ctx.agent.waitForEnd(res.body.runId);
      const detail = await t.api('GET', `/api/agent/runs/${res.body.runId}`, undefined, headers);
      return detail.body.executions[0]?.result;
    };
    expect((await bobRun({ id: 'l', tool: 'memory_list', arguments: {} })).memories).toEqual([]);
    expect(await bobRun({ id: 'f', tool: 'memory_forget', arguments: { id: memories[1]?.id } })).toEqual({ forgotten: false });
    const mine = await runSteps([{ id: 'l', tool: 'memory_list', arguments: {} }]);
    expect(mine.find((e) => e.type === 'step_complete')?.data.result.memories).toHaveLength(memories.length - 1);
  });

  it('GET /api/memory lists newest first with its source, searches every term, pages by cursor; DELETE is owner-scoped', async () => {
    llm.push({ text: 'summary' });
    const run = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 'r', tool: 'memory_remember', arguments: { content: 'Budget 100% approved by Finance_team' } }] } });
    const runId = run.body.runId as string;
    expect((await t.stream(runId)).at(-1)?.type).toBe('complete');
    const all = await t.api('GET', '/api/memory');
    expect(all.status).toBe(200);
    const items = all.body.items as Array<{ id: string; text: string; createdAt: string; source: { runId?: string; conversationId?: string } }>;
    expect(items[0]?.text).toBe('Budget 100% approved by Finance_team');
    expect(items[0]?.source).toEqual({ runId });
    expect(items.find((m) => m.text === 'Invoices are split by the Region column')?.source.conversationId).toEqual(expect.any(String));

    const search = async (q: string) => ((await t.api('GET', `/api/memory?q=${encodeURIComponent(q)}`)).body.items as Array<{ text: string }>).map((m) => m.text);
    expect(await search('finance QUARTERLY')).toEqual(['Quarterly report totals go to finance']);
    expect(await search('100%')).toEqual(['Budget 100% approved by Finance_team']);
    // LIKE's wildcards stay literal: "_" and "%" match only themselves
    expect(await search('e_team')).toEqual(['Budget 100% approved by Finance_team']);
    expect(await search('%')).toEqual(['Budget 100% approved by Finance_team']);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await t.api('GET', `/api/memory?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.items).toHaveLength(1);
      seen.push(page.body.items[0].id);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(items.map((m) => m.id));
    const bad = await t.api('GET', '/api/memory?cursor=bm9wZQ');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'memory_cursor_invalid']);
    expect((await t.api('GET', '/api/memory?limit=0')).status).toBe(400);

    const bob = await t.api('POST', '/api/owners', { name: 'bob2' });
    const bobHeaders = { 'x-fengyu-token': bob.body.token };
    expect((await t.api('GET', '/api/memory', undefined, bobHeaders)).body.items).toEqual([]);
    const theirs = await t.api('DELETE', `/api/memory/${items[0]?.id}`, undefined, bobHeaders);
    expect([theirs.status, theirs.body.error.code]).toEqual([404, 'memory_not_found']);
    expect((await t.api('DELETE', `/api/memory/${items[0]?.id}`)).status).toBe(204);
    expect((await t.api('DELETE', `/api/memory/${items[0]?.id}`)).status).toBe(404);
    expect((await t.api('GET', '/api/memory')).body.items.map((m: { id: string }) => m.id)).toEqual(items.slice(1).map((m) => m.id));
    expect((await t.api('GET', '/api/memory', undefined, { 'x-fengyu-token': 'wrong' })).status).toBe(401);
  });

  it('refuses empty or oversized memories', async () => {
    for (const content of ['   ', 'x'.repeat(2001)]) {
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 'r', tool: 'memory_remember', arguments: { content } }] } });
      if (res.status === 400) continue; // rejected by schema validation before running
      const events = await t.stream(res.body.runId);
      expect(events.find((e) => e.type === 'step_complete')?.data.status).toBe('failed');
    }
  });
});
