import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A settings patch is merged into stored objects, so no key that reaches a prototype
 * (`__proto__`, `constructor`, `prototype`) is accepted at any depth; the 400 names the path and
 * nothing is saved. Other JSON bodies refuse only `__proto__` (the same function, one key set).
 */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

const HOSTILE: Array<[string, string, string]> = [
  ['{"constructor":{"prototype":{"polluted":true}}}', 'constructor', 'constructor'],
  ['{"permissions":{"constructor":{"prototype":{"polluted":true}}}}', 'constructor', 'permissions.constructor'],
  ['{"permissions":{"allow":[],"prototype":{"polluted":true}}}', 'prototype', 'permissions.prototype'],
  ['{"mcpServers":{"constructor":{"command":"x","args":[],"env":{}}}}', 'constructor', 'mcpServers.constructor'],
  ['{"mcpServers":{"s":{"command":"x","args":[],"env":{"prototype":"1"}}}}', 'prototype', 'mcpServers.s.env.prototype'],
  ['{"hooks":[{"name":"h","event":"pre_tool_use","type":"command","command":"true","constructor":{}}]}', 'constructor', 'hooks[0].constructor'],
  ['{"webFetch":{"allowPrivateNetwork":false,"__proto__":{"allowPrivateNetwork":true}}}', '__proto__', 'webFetch.__proto__'],
  ['{"memory":{"\\u0063onstructor":{}}}', 'constructor', 'memory.constructor'],
];

describe('settings PATCH refuses prototype keys at any depth', () => {
  for (const [body, key, path] of HOSTILE) {
    it(`refuses ${path}, naming it in both languages, and saves nothing`, async () => {
      const before = await t.api('GET', '/api/settings');
      const en = await t.api('PATCH', '/api/settings', body);
      expect(en.status, body).toBe(400);
      expect(en.body.error.code).toBe('forbidden_key');
      expect(en.body.error.message).toContain(`"${key}"`);
      expect(en.body.error.message).toContain(path);
      const zh = await t.api('PATCH', '/api/settings', body, { 'accept-language': 'zh-CN' });
      expect(zh.status).toBe(400);
      expect(zh.body.error.message).toContain('请求体中不允许出现键');
      expect(zh.body.error.message).toContain(path);
      expect((await t.api('GET', '/api/settings')).body).toEqual(before.body);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  }

  it('accepts the same words as values, and an ordinary patch next to them', async () => {
    const res = await t.api('PATCH', '/api/settings', { permissions: { deny: ['Tool(constructor)'], ask: [], allow: ['Tool(prototype)'] }, memory: { enabled: true } });
    expect(res.status).toBe(200);
    expect(res.body.permissions.allow).toEqual(['Tool(prototype)']);
  });

  it('other bodies refuse only __proto__, with its path', async () => {
    const ctor = await t.api('POST', '/api/permissions/check', { tool: 'echo', arguments: { constructor: 'x' } });
    expect(ctor.status).toBe(200);
    const proto = await t.api('POST', '/api/permissions/check', '{"tool":"echo","arguments":{"list":[{"__proto__":{}}]}}');
    expect(proto.status).toBe(400);
    expect(proto.body.error.code).toBe('forbidden_key');
    expect(proto.body.error.message).toContain('arguments.list[0].__proto__');
  });
});
