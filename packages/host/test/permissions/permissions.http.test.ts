import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

const check = (body: unknown) => t.api('POST', '/api/permissions/check', body);

describe('settings validation', () => {
  it('rejects a malformed rule naming the list and the line', async () => {
    const res = await t.api('PATCH', '/api/settings', { permissions: { allow: ['Command(git:*)', 'Command(git status', 'Effect(read)'], deny: ['Shell(rm)'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_settings');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'permissions.allow[1]', line: 2, message: expect.stringContaining('missing closing parenthesis') }),
        expect.objectContaining({ field: 'permissions.deny[0]', line: 1, message: expect.stringContaining('unknown rule kind') }),
      ]),
    );
    const after = await t.api('GET', '/api/settings');
    expect(after.body.permissions).toEqual({ deny: [], ask: [], allow: [] });
  });

  it('rejects an invalid hook and accepts a valid one', async () => {
    const bad = await t.api('PATCH', '/api/settings', { hooks: [{ name: 'x', event: 'pre_tool_use', type: 'command' }] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('command');
    const wrongEvent = await t.api('PATCH', '/api/settings', { hooks: [{ name: 'x', event: 'before_everything', type: 'command', command: 'true' }] });
    expect(wrongEvent.status).toBe(400);
    const ok = await t.api('PATCH', '/api/settings', { hooks: [{ name: 'audit', event: 'pre_tool_use', matcher: 'execute_command', type: 'command', command: 'exit 0', timeoutSeconds: 5 }] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const got = await t.api('GET', '/api/settings');
    expect(got.body.hooks).toEqual([{ name: 'audit', event: 'pre_tool_use', matcher: 'execute_command', type: 'command', command: 'exit 0', timeoutSeconds: 5, enabled: true }]);
  });

  it('takes failClosed only as a boolean and only on pre_tool_use hooks', async () => {
    const post = await t.api('PATCH', '/api/settings', { hooks: [{ name: 'p', event: 'post_tool_use', type: 'command', command: 'true', failClosed: true }] });
    expect([post.status, post.body.error.code]).toEqual([400, 'invalid_settings']);
    expect(JSON.stringify(post.body.error.details)).toContain('failClosed');
    const notBool = await t.api('PATCH', '/api/settings', { hooks: [{ name: 'p', event: 'pre_tool_use', type: 'command', command: 'true', failClosed: 'yes' }] });
    expect(notBool.status).toBe(400);
    expect(JSON.stringify(notBool.body.error.details)).toContain('failClosed');
  });
});

describe('POST /api/permissions/check', () => {
  it('lists execute_command in the catalog with effect command', async () => {
    const tools = (await t.api('GET', '/api/agent/tools')).body;
    const list = Array.isArray(tools) ? tools : tools.tools;
    expect(list.find((x: { name: string }) => x.name === 'execute_command')).toMatchObject({ effect: 'command', source: 'builtin' });
  });

  it('answers against the saved rules, with source and rule', async () => {
    const saved = await t.api('PATCH', '/api/settings', { permissions: { allow: ['Command(git:*)'], deny: ['Command(git push:*)'], ask: [] } });
    expect(saved.status).toBe(200);
    expect((await check({ tool: 'execute_command', arguments: { command: 'git status' } })).body).toEqual({ decision: 'allow', source: 'allow', rule: 'Command(git:*)', reason: expect.any(String) });
    expect((await check({ tool: 'execute_command', arguments: { command: 'git status && git push' } })).body).toMatchObject({ decision: 'deny', source: 'deny', rule: 'Command(git push:*)' });
    expect((await check({ tool: 'execute_command', arguments: { command: 'git status && rm -rf /' } })).body).toMatchObject({ decision: 'ask', source: 'floor' });
    expect((await check({ tool: 'execute_command', arguments: { command: 'make' }, permissionMode: 'approve-for-me' })).body).toMatchObject({ decision: 'allow', source: 'mode' });
  });

  it('evaluates candidate rules instead of the saved ones, and rejects malformed candidates', async () => {
    const res = await check({ tool: 'echo', arguments: {}, rules: { deny: ['Tool(ech*)'] } });
    expect(res.body).toMatchObject({ decision: 'deny', source: 'deny', rule: 'Tool(ech*)' });
    const bad = await check({ tool: 'echo', rules: { allow: ['Tool('] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0]).toMatchObject({ field: 'rules.allow[0]', line: 1 });
  });

  it('does not run hooks in the dry run', async () => {
    await t.api('PATCH', '/api/settings', { hooks: [{ name: 'blocker', event: 'pre_tool_use', type: 'command', command: 'exit 2' }] });
    expect((await check({ tool: 'execute_command', arguments: { command: 'git log' } })).body).toMatchObject({ decision: 'allow', source: 'allow' });
    await t.api('PATCH', '/api/settings', { hooks: [] });
  });

  it('answers 404 for an unknown tool and 400 for a bad body', async () => {
    expect((await check({ tool: 'no_such_tool' })).status).toBe(404);
    expect((await check({ arguments: {} })).status).toBe(400);
    expect((await check({ tool: 'echo', permissionMode: 'yolo' })).status).toBe(400);
  });
});

describe('plugin hook trust routes', () => {
  it('refuses to trust a plugin that is not installed; untrust of an untrusted id changes nothing', async () => {
    const trust = await t.api('POST', '/api/plugin-hooks/acme.guard/trust');
    expect(trust.status).toBe(404);
    expect(trust.body.error.code).toBe('plugin_not_found');
    expect((await t.api('GET', '/api/plugin-hooks')).body.trusted).toEqual([]);
    const untrust = await t.api('POST', '/api/plugin-hooks/acme.guard/untrust');
    expect(untrust.body).toEqual({ pluginId: 'acme.guard', trusted: false, changed: false });
    expect((await t.api('POST', '/api/plugin-hooks/..%2Fetc/trust')).status).toBe(400);
    expect((await t.api('POST', '/api/plugin-hooks/-bad/trust')).status).toBe(400);
  });
});

describe('runs through the guard', () => {
  it('a denied execute_command fails its step with the rule reason, visible in the events', async () => {
    await t.api('PATCH', '/api/settings', { permissions: { allow: ['Command'], deny: ['Command(rm:*)'], ask: [] }, hooks: [{ name: 'seen', event: 'pre_tool_use', matcher: 'execute_command', type: 'command', command: 'cat >/dev/null; exit 0' }] });
    const res = await t.api('POST', '/api/agent/run', {
      goal: 'deny',
      config: { planApproval: false, permissionMode: 'full-access' },
      workflow: { steps: [{ id: 'ok', tool: 'execute_command', arguments: { command: 'echo hi' } }, { id: 'rm', tool: 'execute_command', arguments: { command: 'echo x; rm -f nothing' }, dependsOn: ['ok'] }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    const okDone = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'ok');
    expect(okDone?.data).toMatchObject({ status: 'done', result: { exitCode: 0, stdout: 'hi\n', timedOut: false } });
    const rmDone = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'rm');
    expect(rmDone?.data.status).toBe('failed');
    expect(rmDone?.data.error).toContain('Command(rm:*)');
    const audits = events.filter((e) => e.type === 'audit');
    expect(audits.some((a) => a.data.kind === 'hook' && a.data.hook === 'seen' && a.data.outcome === 'proceed')).toBe(true);
    expect(audits.some((a) => a.data.kind === 'permission' && a.data.source === 'deny' && a.data.stepId === 'rm')).toBe(true);
    await t.api('PATCH', '/api/settings', { hooks: [] });
  });

  it('a crashing fail-closed hook blocks a write: the step fails with the reason and nothing is written', async () => {
    const marker = `${t.host.ctx.config.home}/fail-closed-marker`;
    await t.api('PATCH', '/api/settings', { hooks: [{ name: 'guard', event: 'pre_tool_use', matcher: 'execute_command', type: 'command', command: 'kill -9 $$', failClosed: true }] });
    const res = await t.api('POST', '/api/agent/run', { goal: 'blocked write', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 'w', tool: 'execute_command', arguments: { command: `touch ${marker}` } }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    const done = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'w');
    expect(done?.data.status).toBe('failed');
    expect(done?.data.error).toContain('hook guard failed closed');
    expect(events.some((e) => e.type === 'audit' && e.data.kind === 'hook' && e.data.hook === 'guard' && e.data.outcome === 'failed')).toBe(true);
    expect(existsSync(marker)).toBe(false);
    await t.api('PATCH', '/api/settings', { hooks: [] });
  });
});
