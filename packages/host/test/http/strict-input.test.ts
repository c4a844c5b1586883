import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

describe('JSON bodies are taken as sent', () => {
  it('refuses a number where the goal text belongs, naming the field, and starts nothing', async () => {
    const before = t.tools.calls.size;
    const res = await t.api('POST', '/api/agent/run', { goal: 5, workflow: { steps: [{ id: 'a', tool: 'noop' }] }, config: { planApproval: false, permissionMode: 'full-access' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain('body.goal');
    expect(t.tools.calls.size).toBe(before);
  });

  it('refuses a string where a boolean belongs', async () => {
    const res = await t.api('POST', '/api/agent/run', { goal: 'x', workflow: { steps: [{ id: 'a', tool: 'noop' }] }, config: { planApproval: 'false' } });
    expect(res.status).toBe(400);
  });

  it('still reads numbers and booleans from the query string', async () => {
    const res = await t.api('GET', '/api/agent/runs?limit=2');
    expect(res.status).toBe(200);
  });

  it('names the real limit in a 413, in both languages', async () => {
    const big = JSON.stringify({ goal: 'x'.repeat(2 * 1024 * 1024) });
    const en = await t.api('POST', '/api/agent/run', big);
    expect(en.status).toBe(413);
    expect(en.body.error.message).toMatch(/\d{6,} bytes/);
    expect(en.body.error.message).not.toContain('the the');
    const zh = await t.api('POST', '/api/agent/run', big, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toMatch(/\d{6,} 字节/);
  });
});

describe('settings that refer to each other', () => {
  it('refuses a defaultBackend that names no configured backend, naming the field', async () => {
    const res = await t.api('PATCH', '/api/settings', { defaultBackend: 'ghost' });
    expect(res.status).toBe(400);
    const detail = res.body.error.details.find((d: { field: string }) => d.field === 'defaultBackend');
    expect(detail?.message).toContain('ghost');
    const zh = await t.api('PATCH', '/api/settings', { defaultBackend: 'ghost' }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.details.find((d: { field: string }) => d.field === 'defaultBackend')?.message).toContain('默认后端');
    expect((await t.api('GET', '/api/settings')).body.defaultBackend ?? null).toBeNull();
  });

  it('accepts a defaultBackend set together with its backend, and clearing it', async () => {
    const ok = await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }], defaultBackend: 'local' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const removeBackend = await t.api('PATCH', '/api/settings', { backends: [] });
    expect(removeBackend.status).toBe(400);
    expect((await t.api('PATCH', '/api/settings', { backends: [], defaultBackend: null })).status).toBe(200);
  });
});
