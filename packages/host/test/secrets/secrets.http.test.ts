import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateKey } from '../../src/secrets/rotate';
import { VaultRepository } from '../../src/secrets/vault.repository';
import { migrate, openDatabase } from '../../src/storage/database';
import { filesHolding } from '../support/home-bytes';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * The vault end to end (docs/secrets.md) on a real host: the API, references resolved at dispatch by a
 * real command that echoes the value, redaction in every answer and event, the raw bytes of
 * every file under the home, another owner, a restart and a key rotation on the same home.
 */

const VALUE = 'tok-3f9a-SECRET-value-77';
const home = mkdtempSync(join(tmpdir(), 'fengyu-secrets-'));
let t: TestHost;
let bob: string;

beforeAll(async () => {
  t = await startTestHost({ keepHome: home });
  bob = (await t.api('POST', '/api/owners', { name: 'bob' })).body.token;
});
afterAll(async () => {
  await t.close();
  rmSync(home, { recursive: true, force: true });
});

/** A real command that fails with the value in its stderr (its error and its kept result carry it). */
const failingPlan = (ref = '{{secrets.API_TOKEN}}') => ({ steps: [{ id: 'ls', tool: 'execute_command', arguments: { command: `ls '/nonexistent-${ref}'` } }] });
const plainEcho = (ref = '{{secrets.API_TOKEN}}') => ({ steps: [{ id: 'say', tool: 'execute_command', arguments: { command: `printf 'got:%s' '${ref}'` } }] });
const fetchPlan = (ref = '{{secrets.API_TOKEN}}') => ({ steps: [{ id: 'fetch', tool: 'web_fetch', arguments: { url: `http://127.0.0.1:1/${ref}` } }] });

async function runAndWait(plan: unknown, token?: string) {
  const res = await t.api('POST', '/api/agent/run', { goal: 'echo', workflow: plan, config: auto }, token ? { 'x-fengyu-token': token } : {});
  if (res.status !== 200) return { res, events: [] };
  if (!token) return { res, events: await t.stream(res.body.runId) };
  // another owner's run: its stream is not the default token's to read
  await t.host.ctx.agent.waitForEnd(res.body.runId);
  const detail = await t.api('GET', `/api/agent/runs/${res.body.runId}`, undefined, { 'x-fengyu-token': token });
  return { res, events: (detail.body.events as Array<{ type: string }>).map((e) => ({ type: e.type, id: '', data: e })) };
}

describe('the vault API', () => {
  it('creates, lists (never a value), replaces and deletes a secret', async () => {
    expect((await t.api('PUT', '/api/secrets/API_TOKEN', { value: 'first-value' })).status).toBe(204);
    const first = (await t.api('GET', '/api/secrets')).body.items;
    expect(first).toEqual([{ name: 'API_TOKEN', createdAt: expect.any(String), updatedAt: expect.any(String) }]);
    expect((await t.api('PUT', '/api/secrets/API_TOKEN', { value: VALUE })).status).toBe(204);
    const list = await t.api('GET', '/api/secrets');
    expect(list.body.items[0].createdAt).toBe(first[0].createdAt);
    expect(JSON.stringify(list.body)).not.toContain(VALUE);
    expect((await t.api('PUT', '/api/secrets/TEMP', { value: 'gone soon' })).status).toBe(204);
    expect((await t.api('DELETE', '/api/secrets/TEMP')).status).toBe(204);
    expect((await t.api('DELETE', '/api/secrets/TEMP')).status).toBe(404);
  });

  it('refuses a bad name, an empty, oversized or non-string value, and a wrong body, localized', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['/api/secrets/1BAD', { value: 'x' }, 'secret_name_invalid'],
      ['/api/secrets/bad-name', { value: 'x' }, 'secret_name_invalid'],
      [`/api/secrets/${'A'.repeat(65)}`, { value: 'x' }, 'secret_name_invalid'],
      ['/api/secrets/OK', { value: '' }, 'secret_value_invalid'],
      ['/api/secrets/OK', { value: 'x'.repeat(65537) }, 'secret_value_invalid'],
      ['/api/secrets/OK', { value: 42 }, 'secret_value_invalid'],
      ['/api/secrets/OK', { value: 'x', extra: 1 }, 'secret_value_invalid'],
      ['/api/secrets/OK', ['x'], 'secret_value_invalid'],
    ];
    for (const [path, body, code] of cases) {
      const res = await t.api('PUT', path, body);
      expect([res.status, res.body.error.code], path).toEqual([400, code]);
    }
    const zh = await t.api('PUT', '/api/secrets/1BAD', { value: 'x' }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toContain('密钥名称');
    expect((await t.api('PUT', '/api/secrets/OK', { value: 'x'.repeat(65536) })).status).toBe(204);
    expect((await t.api('DELETE', '/api/secrets/OK')).status).toBe(204);
  });

  it('another owner neither sees, deletes, nor uses the secret', async () => {
    const as = { 'x-fengyu-token': bob };
    expect((await t.api('GET', '/api/secrets', undefined, as)).body.items).toEqual([]);
    expect((await t.api('DELETE', '/api/secrets/API_TOKEN', undefined, as)).status).toBe(404);
    const { res } = await runAndWait(fetchPlan(), bob);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { code: string }) => d.code)).toEqual(['secret_unknown']);
    // bob's own secret of the same name is his, and ours stays ours
    expect((await t.api('PUT', '/api/secrets/API_TOKEN', { value: 'bobs-own-value' }, as)).status).toBe(204);
    const bobs = await runAndWait(fetchPlan(), bob);
    const error = bobs.events.find((e) => e.type === 'step_complete')?.data.error;
    expect(error).toContain('127.0.0.1:1/[redacted:API_TOKEN]');
    expect(JSON.stringify(bobs.events)).not.toContain('bobs-own-value');
  });
});

describe('references at dispatch', () => {
  it('refuses a missing secret and a secret outside tool arguments before anything runs', async () => {
    const before = (await t.api('GET', '/api/agent/runs')).body.runs.length;
    const bad = [
      [plainEcho('{{secrets.NOPE}}'), 'secret_unknown'],
      [{ steps: [{ id: 'm', instruction: 'say {{secrets.API_TOKEN}}' }] }, 'secret_not_allowed_here'],
      [{ goal: 'use {{secrets.API_TOKEN}}', steps: plainEcho().steps }, 'secret_not_allowed_here'],
    ] as const;
    for (const [plan, code] of bad) {
      const res = await t.api('POST', '/api/agent/run', { workflow: plan, config: auto });
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { code: string }) => d.code)).toContain(code);
    }
    const goal = await t.api('POST', '/api/agent/run', { goal: 'tell me {{secrets.API_TOKEN}}', config: auto });
    expect([goal.status, goal.body.error.details?.[0]?.code]).toEqual([400, 'secret_not_allowed_here']);
    expect((await t.api('GET', '/api/agent/runs')).body.runs.length).toBe(before);
  });

  it('a real command gets the value; its output and error come back [redacted:NAME]; events show the reference', async () => {
    const { res, events } = await runAndWait(failingPlan());
    expect(res.status).toBe(200);
    expect(JSON.stringify(events)).not.toContain(VALUE);
    const start = events.find((e) => e.type === 'step_start' && e.data.stepId === 'ls');
    expect(start?.data.arguments.command).toBe("ls '/nonexistent-{{secrets.API_TOKEN}}'");
    const ls = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'ls');
    expect([ls?.data.status, ls?.data.error]).toEqual(['failed', expect.stringContaining("'/nonexistent-[redacted:API_TOKEN]'")]);
    const failed = await t.api('GET', `/api/agent/runs/${res.body.runId}`);
    expect(JSON.stringify(failed.body)).not.toContain(VALUE);
    expect(JSON.stringify(failed.body.executions)).toContain('[redacted:API_TOKEN]');
    const ok = await runAndWait(plainEcho());
    const result = ok.events.find((e) => e.type === 'step_complete')?.data.result;
    expect(JSON.stringify(result)).toContain('got:[redacted:API_TOKEN]');
    const detail = await t.api('GET', `/api/agent/runs/${ok.res.body.runId}`);
    expect(JSON.stringify(detail.body)).not.toContain(VALUE);
    expect(JSON.stringify(detail.body)).toContain('{{secrets.API_TOKEN}}');
  });

  it('a {{secrets.…}} text arriving as data (another step’s result) is never substituted', async () => {
    const plan = {
      steps: [
        { id: 'a', tool: 'execute_command', arguments: { command: "printf '\\173\\173secrets.API_TOKEN\\175\\175'" } },
        { id: 'b', tool: 'execute_command', arguments: { command: "printf 'b:%s' '{{node.a.result.stdout}}'" }, dependsOn: ['a'] },
      ],
    };
    const { events } = await runAndWait(plan);
    const b = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'b');
    expect(JSON.stringify(b?.data.result)).toContain('b:{{secrets.API_TOKEN}}');
  });

  it('no file under the home holds the value in clear after real runs (database, WAL, logs)', () => {
    expect(filesHolding(home, VALUE)).toEqual([]);
    expect(filesHolding(home, PASSWORD)).toEqual([]);
    expect(filesHolding(home, 'bobs-own-value')).toEqual([]);
  });
});

/** A workflow input declared `format: "password"` is write-only (agent/secret-inputs.ts). */
const PASSWORD = 'pw-8c1e-INPUT-secret';
const reversed = [...PASSWORD].reverse().join('');
let parkedRun = '';

describe('secret workflow inputs (format: password)', () => {
  it('the run gets the value; its row, goal, events, gate, inbox and detail show only the marker', async () => {
    const wf = await t.api('POST', '/api/workflows', {
      name: 'Sign in',
      description: 'uses a password input',
      inputSchema: { type: 'object', properties: { pw: { type: 'string', format: 'password' }, who: { type: 'string' } }, required: ['pw'] },
      plan: {
        goal: 'Sign in as {{inputs.who}} with {{inputs.pw}}',
        steps: [
          { id: 'echo', tool: 'execute_command', arguments: { command: 'printf %s {{inputs.pw}}' } },
          // the value reaches the command: its reversal is no secret, so it comes back as it is
          { id: 'ask', kind: 'input', title: 'Go on?', form: { type: 'object', properties: { go: { type: 'boolean' } } }, dependsOn: ['echo'] },
          { id: 'rev', tool: 'execute_command', arguments: { command: 'printf %s {{inputs.pw}} | rev' }, dependsOn: ['ask'] },
        ],
      },
    });
    expect(wf.status).toBe(200);
    const run = await t.api('POST', `/api/workflows/${wf.body.id}/run`, { inputs: { pw: PASSWORD, who: 'ann' }, config: { permissionMode: 'full-access' } });
    expect(run.status).toBe(200);
    parkedRun = run.body.runId;
    await t.waitFor(parkedRun, 'input_requested');
    const detail = await t.api('GET', `/api/agent/runs/${parkedRun}`);
    const shown = JSON.stringify(detail.body);
    expect(shown).not.toContain(PASSWORD);
    expect(detail.body.inputs).toEqual({ pw: '[redacted]', who: 'ann' });
    expect(detail.body.goal).toBe('Sign in as ann with [redacted]');
    const echo = (detail.body.events as Array<{ type: string; stepId?: string; result?: unknown }>).find((e) => e.type === 'step_complete' && e.stepId === 'echo');
    expect(JSON.stringify(echo?.result)).toContain('[redacted:run:');
    expect(JSON.stringify((await t.api('GET', '/api/inbox')).body)).not.toContain(PASSWORD);
  });
});

/** A task, a schedule and a webhook trigger keep a secret input in the vault until the run they start reads it (agent/secret-inputs.ts). */
const HELD = 'pw-51d0-HELD-secret';
const SENT = 'pw-7e22-SENT-in-a-delivery';
describe('secret inputs of a task, a schedule and a webhook trigger', () => {
  it('rows and views hold the marker, each started run gets the value, deleting the holder removes it', async () => {
    const made = await t.api('POST', '/api/workflows', {
      name: 'Held sign in',
      description: 'uses a password input',
      inputSchema: { type: 'object', properties: { pw: { type: 'string', format: 'password' } } },
      plan: { steps: [{ id: 'rev', tool: 'execute_command', arguments: { command: 'printf %s {{inputs.pw}} | rev' } }] },
    });
    expect((await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision })).status).toBe(200);
    const wf = made.body.id as string;
    const task = await t.api('POST', '/api/agent/tasks', { workflowId: wf, inputs: { pw: HELD }, permissionMode: 'full-access' });
    expect(task.status).toBe(202);
    const schedule = await t.api('POST', '/api/agent/schedules', { workflowId: wf, inputs: { pw: HELD }, permissionMode: 'full-access', runImmediately: true, recurrence: { kind: 'daily', time: '09:00', timeZone: 'UTC' } });
    expect(schedule.status).toBe(201);
    expect(schedule.body.inputs).toEqual({ pw: '[redacted]' });
    const trigger = await t.api('POST', `/api/workflows/${wf}/webhooks`, { permissionMode: 'full-access', defaults: { pw: HELD } });
    expect(trigger.status).toBe(201);
    expect(trigger.body.trigger.defaults).toEqual({ pw: '[redacted]' });
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks`)).body.items[0].defaults).toEqual({ pw: '[redacted]' });
    const deliver = (body: unknown) => fetch(`${t.host.url}/api/workflow-hooks/${trigger.body.trigger.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': trigger.body.secret }, body: JSON.stringify(body) });
    const hook = await deliver({});
    expect(hook.status).toBe(202);
    // a value the delivery sends itself (not the trigger's default) is sealed in the delivery's own transaction
    const sent = await deliver({ pw: SENT });
    expect(sent.status).toBe(202);
    const sentTask = ((await sent.json()) as { taskId: string }).taskId;
    const row = await t.host.ctx.db.selectFrom('bg_tasks').select('inputs').where('id', '=', sentTask).executeTakeFirstOrThrow();
    expect(JSON.parse(row.inputs)).toEqual({ pw: '[redacted]' });
    const taskIds: Array<[string, string]> = [
      [task.body.id, HELD],
      [schedule.body.lastTaskId, HELD],
      [((await hook.json()) as { taskId: string }).taskId, HELD],
      [sentTask, SENT],
    ];
    const vault = t.host.ctx.vault;
    for (const [id, value] of taskIds) {
      const done = (await t.api('GET', `/api/agent/tasks/${id}/output?timeoutMs=30000`)).body;
      expect(done.state, JSON.stringify(done)).toBe('completed');
      const detail = (await t.api('GET', `/api/agent/runs/${done.runId}`)).body;
      expect(detail.inputs).toEqual({ pw: '[redacted]' });
      const rev = (detail.events as Array<{ type: string; stepId?: string; result?: { stdout?: string } }>).find((e) => e.type === 'step_complete' && e.stepId === 'rev');
      expect(rev?.result?.stdout).toBe([...value].reverse().join(''));
      // the run keeps its own copy; the task's is gone once the run started
      expect(vault.getInternal('default', `task:${id}/input/pw`)).toBeUndefined();
    }
    expect(vault.getInternal('default', `schedule:${schedule.body.id}/input/pw`)).toBe(HELD);
    expect(vault.getInternal('default', `trigger:${trigger.body.trigger.id}/input/pw`)).toBe(HELD);
    expect((await t.api('DELETE', `/api/agent/schedules/${schedule.body.id}`)).status).toBeLessThan(300);
    expect((await t.api('DELETE', `/api/workflows/${wf}/webhooks/${trigger.body.trigger.id}`)).status).toBeLessThan(300);
    expect(vault.getInternal('default', `schedule:${schedule.body.id}/input/pw`)).toBeUndefined();
    expect(vault.getInternal('default', `trigger:${trigger.body.trigger.id}/input/pw`)).toBeUndefined();
    // a task submitted with the marker itself reads no one's value: its run gets the marker
    const marker = await t.api('POST', '/api/agent/tasks', { workflowId: wf, inputs: { pw: '[redacted]' }, permissionMode: 'full-access' });
    const plain = (await t.api('GET', `/api/agent/tasks/${marker.body.id}/output?timeoutMs=30000`)).body;
    const ev = (await t.api('GET', `/api/agent/runs/${plain.runId}`)).body.events as Array<{ type: string; stepId?: string; result?: { stdout?: string } }>;
    expect(ev.find((e) => e.type === 'step_complete' && e.stepId === 'rev')?.result?.stdout).toBe([...'[redacted]'].reverse().join(''));
    // the hostile side: no file under the home (database, WAL, logs) holds either value in clear
    expect(filesHolding(home, HELD)).toEqual([]);
    expect(filesHolding(home, SENT)).toEqual([]);
  });
});

describe('restart and rotation', () => {
  it('a restart still decrypts; a rotated key keeps everything readable; a wrong key stops the start', async () => {
    await t.host.close();
    const db = openDatabase(home);
    await migrate(db.db);
    const rotated = await rotateKey(new VaultRepository(db.db), { home });
    await db.close();
    expect(rotated.count).toBeGreaterThanOrEqual(2);
    t = await startTestHost({ keepHome: home });
    const { events } = await runAndWait(plainEcho());
    const done = events.find((e) => e.type === 'step_complete');
    expect(done?.data.status).toBe('done');
    // a run parked with a secret input continues from its row after the restart: the vault gives the value back
    expect((await t.api('POST', `/api/agent/${parkedRun}/input`, { values: { go: true } })).status).toBe(200);
    const parked = await t.stream(parkedRun);
    const rev = parked.find((e) => e.type === 'step_complete' && e.data.stepId === 'rev');
    expect([rev?.data.status, rev?.data.result?.stdout]).toEqual(['done', reversed]);
    expect(JSON.stringify(parked)).not.toContain(PASSWORD);
    expect(JSON.stringify(done?.data.result)).toContain('got:[redacted:API_TOKEN]');
    await t.host.close();
    await expect(startTestHost({ keepHome: home, secretsKey: 'ab'.repeat(32) })).rejects.toMatchObject({ code: 'secrets_key_wrong' });
    await expect(startTestHost({ keepHome: home, secretsKey: 'short' })).rejects.toMatchObject({ code: 'secrets_key_invalid' });
    rmSync(join(home, 'secrets.key'));
    await expect(startTestHost({ keepHome: home })).rejects.toMatchObject({ code: 'secrets_key_missing' });
    expect(filesHolding(home, VALUE)).toEqual([]);
    expect(filesHolding(home, PASSWORD)).toEqual([]);
    expect(filesHolding(home, HELD)).toEqual([]);
    t = { ...t, close: async () => undefined };
  });
});
