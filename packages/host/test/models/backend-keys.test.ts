import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { chat } from '../chat/chat-client';
import { startScriptedOpenAI } from '../support/scripted-openai';
import { scriptedHost } from '../support/scripted-host';

/**
 * Keys never reach an address the owner of the key did not enter them for:
 * - `apiKeyEnv` is the primary owner's only, and never a FENGYU_* variable (save and use);
 * - a stored key (or MCP header value) does not follow a changed address: "[redacted]" keeps it
 *   only while provider and baseURL (the MCP server's url) are unchanged.
 * The scripted model server on loopback stands in for the attacker's URL.
 */

const SECRET = 'sk-host-provider-key-777';
const { t, llm } = scriptedHost({ host: () => ({ env: { ...process.env, FENGYU_TEST_PROVIDER_KEY: SECRET, PROVIDER_KEY: SECRET } }) });

const problems = (body: any) => (body?.error?.details ?? []) as Array<{ code: string; field: string; message: string }>;

describe('apiKeyEnv', () => {
  it('a second owner cannot name any environment variable (clear 400, English and Chinese)', async () => {
    const bob = (await t.api('POST', '/api/owners', { name: 'bob-env' })).body.token as string;
    for (const env of ['PROVIDER_KEY', 'FENGYU_TOKEN', 'HOME']) {
      const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'x', provider: 'openai-compatible', baseURL: llm.url, model: 'm', apiKeyEnv: env }] }, { 'x-fengyu-token': bob });
      expect(res.status).toBe(400);
      expect(problems(res.body).map((p) => p.code)).toContain(env.startsWith('FENGYU_') ? 'backend_key_env_reserved' : 'backend_key_env_forbidden');
    }
    const zh = await t.api('PATCH', '/api/settings', { backends: [{ id: 'x', provider: 'openai-compatible', baseURL: llm.url, model: 'm', apiKeyEnv: 'PROVIDER_KEY' }] }, { 'x-fengyu-token': bob, 'accept-language': 'zh-CN' });
    expect(problems(zh.body)[0]?.message).toContain('只有主所有者');
  });

  it('nobody may name a FENGYU_* variable, the primary owner included', async () => {
    for (const env of ['FENGYU_TOKEN', 'fengyu_database_url', 'FENGYU_TEST_PROVIDER_KEY']) {
      const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'x', provider: 'openai-compatible', baseURL: llm.url, model: 'm', apiKeyEnv: env }] });
      expect(res.status).toBe(400);
      expect(problems(res.body)[0]).toMatchObject({ code: 'backend_key_env_reserved', field: 'backends.x.apiKeyEnv' });
    }
    const ok = await t.api('PATCH', '/api/settings', { backends: [{ id: 'x', provider: 'openai-compatible', baseURL: llm.url, model: 'm', apiKeyEnv: 'PROVIDER_KEY' }] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('is refused at use for a document saved before the rule (nothing is sent)', async () => {
    const { owner, token: carol } = (await t.api('POST', '/api/owners', { name: 'carol-env' })).body as { owner: string; token: string };
    const db = new Database(join(t.home, 'fengyu.db'));
    const doc = { backends: [{ id: 'old', provider: 'openai-compatible', baseURL: llm.url, model: 'm', apiKeyEnv: 'PROVIDER_KEY' }], defaultBackend: 'old' };
    db.prepare('insert into settings (owner, doc, updated_at) values (?, ?, ?) on conflict(owner) do update set doc = excluded.doc').run(owner, JSON.stringify(doc), new Date().toISOString());
    db.close();
    const before = llm.headers.length;
    const r = await chat(t, { message: 'hi' }, undefined, carol);
    expect(r.body?.error?.code ?? r.frames.at(-1)?.data?.code).toBe('backend_key_env_forbidden');
    expect(llm.headers.slice(before).map((h) => h.authorization)).not.toContain(`Bearer ${SECRET}`);
    expect(llm.headers.length).toBe(before);
  });
});

describe('a changed address', () => {
  it('does not carry the stored backend key: re-enter it, or it is an error naming the backend', async () => {
    const attacker = await startScriptedOpenAI();
    try {
      const save = (b: Record<string, unknown>) => t.api('PATCH', '/api/settings', { backends: [{ id: 'k', provider: 'openai-compatible', model: 'm', ...b }], defaultBackend: 'k' });
      expect((await save({ baseURL: llm.url, apiKey: 'sk-entered-for-llm' })).status).toBe(200);
      const moved = await save({ baseURL: attacker.url, apiKey: '[redacted]' });
      expect(moved.status).toBe(400);
      expect(problems(moved.body)[0]).toMatchObject({ code: 'secret_reentry_required', field: 'backends.k.apiKey' });
      expect(problems(moved.body)[0]?.message).toContain(attacker.url);
      // the provider is part of the address too
      expect((await save({ provider: 'openai', baseURL: llm.url, apiKey: '[redacted]' })).status).toBe(400);
      // nothing moved: the key still goes to the URL it was entered for, never to the new one
      llm.push({ text: 'still here' });
      await chat(t, { message: 'hi' });
      expect(llm.headers.at(-1)?.authorization).toBe('Bearer sk-entered-for-llm');
      // same URL: the marker keeps the key
      expect((await save({ baseURL: llm.url, apiKey: '[redacted]' })).status).toBe(200);
      // a new URL with a new key is fine, and only the new key is sent there
      expect((await save({ baseURL: attacker.url, apiKey: 'sk-new-for-attacker' })).status).toBe(200);
      attacker.push({ text: 'new' });
      await chat(t, { message: 'hi' });
      expect(attacker.headers.map((h) => h.authorization)).toEqual(['Bearer sk-new-for-attacker']);
    } finally {
      await attacker.close();
    }
  });

  it('does not carry an MCP server\'s stored header values either', async () => {
    const save = (url: string, auth: string) => t.api('PATCH', '/api/settings', { mcpServers: { remote: { url, headers: { Authorization: auth } } } });
    expect((await save(`${llm.url}/mcp`, 'Bearer mcp-secret')).status).toBe(200);
    const moved = await save('http://127.0.0.1:9/elsewhere', '[redacted]');
    expect(moved.status).toBe(400);
    expect(problems(moved.body)[0]).toMatchObject({ code: 'secret_reentry_required', field: 'mcpServers.remote.headers.Authorization' });
    expect((await save(`${llm.url}/mcp`, '[redacted]')).status).toBe(200);
    await t.api('PATCH', '/api/settings', { mcpServers: null });
  });

  it("does not carry a stdio MCP server's stored env values to another program", async () => {
    const save = (args: string[], key: string) => t.api('PATCH', '/api/settings', { mcpServers: { local: { command: process.execPath, args, env: { API_KEY: key } } } });
    expect((await save(['server.js'], 'mcp-env-secret')).status).toBe(200);
    const moved = await save(['-e', 'console.log(process.env.API_KEY)'], '[redacted]');
    expect(moved.status).toBe(400);
    expect(problems(moved.body)[0]).toMatchObject({ code: 'secret_reentry_required', field: 'mcpServers.local.env.API_KEY' });
    // entered again, the value may go to the new program; unchanged, the marker keeps it
    expect((await save(['-e', 'console.log(process.env.API_KEY)'], 'mcp-env-entered-again')).status).toBe(200);
    expect((await save(['-e', 'console.log(process.env.API_KEY)'], '[redacted]')).status).toBe(200);
    await t.api('PATCH', '/api/settings', { mcpServers: null });
  });
});
