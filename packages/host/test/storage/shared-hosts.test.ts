import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interruptOrphan } from '../../src/agent/orphans';
import { RunRepository, type RunRow } from '../../src/agent/run.repository';
import { EventLog } from '../../src/events/event-log';
import { migrate, openPostgres } from '../../src/storage/database';
import { HostLease } from '../../src/storage/host-lease';
import { SharedTaskStore } from '../../src/tasks/shared-task.store';
import { ToolCatalog } from '../../src/tools/catalog';
import { startTestHost, type TestHost } from '../support/host';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';
import { startScriptedOpenAI } from '../support/scripted-openai';
import { until } from '../tasks/helpers';

/**
 * Host identity and leases on a shared database: a host that starts, or stops, interrupts only
 * its own live work or that of hosts whose lease ran out — never a live host's — and each
 * interruption happens once, with its event, even when several hosts sweep the same dead host.
 * A run parked at a gate is let go of instead, and any host may take its answer, once.
 */

const TOKEN = 'shared-hosts-token-0123456789abcdef';
const SECRETS_KEY = '5f'.repeat(32);
const logger = pino({ level: 'silent' });

describe.skipIf(!postgresAvailable())('hosts sharing one PostgreSQL database', () => {
  let server: TestPostgres;
  const homes: string[] = [];
  const hosts: TestHost[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    for (const h of hosts) await h.close().catch(() => undefined);
    await server?.stop();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  });

  async function host(databaseUrl: string, env: Record<string, string> = {}, log?: pino.Logger): Promise<TestHost> {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-shared-hosts-'));
    homes.push(home);
    // one vault key for every host of the database (each home would otherwise make its own)
    const h = await startTestHost({ keepHome: home, databaseUrl, token: TOKEN, writeHostFile: false, env: { ...process.env, FENGYU_SECRETS_KEY: SECRETS_KEY, ...env }, ...(log ? { logger: log } : {}) });
    hosts.push(h);
    return h;
  }

  async function statusOf(h: TestHost, runId: string): Promise<string> {
    const row = await h.host.ctx.runs.get(runId);
    return row?.status ?? 'missing';
  }

  it('a host that starts or stops leaves the live runs of another live host alone', async () => {
    const url = await server.createDatabase();
    const a = await host(url);
    const run = await a.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'wait', tool: 'slow', arguments: { ms: 120_000 } }] }, config: { planApproval: false } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const runId = run.body.runId as string;
    await a.waitFor(runId, 'step_start');
    // B starts (its start sweep) and stops (its own live work only): A's run stays live
    const b = await host(url);
    expect(await statusOf(b, runId)).toBe('running');
    await b.close();
    hosts.splice(hosts.indexOf(b), 1);
    expect(await statusOf(a, runId)).toBe('running');
    // A stops: its own run is interrupted, once
    await a.close();
    hosts.splice(hosts.indexOf(a), 1);
    const c = await host(url);
    expect(await statusOf(c, runId)).toBe('interrupted');
    const events = await c.host.ctx.events.read(runId);
    expect(events.filter((e) => e.type === 'interrupted')).toHaveLength(1);
  }, 120_000);

  it('sweeps a host whose lease ran out once, even with several sweepers, and never a live one', async () => {
    const url = await server.createDatabase();
    const opened = [openPostgres(url), openPostgres(url), openPostgres(url)];
    const [d0, d1, d2] = opened.map((o) => o.db) as [(typeof opened)[0]['db'], (typeof opened)[0]['db'], (typeof opened)[0]['db']];
    await migrate(d0);
    let now = 1_000_000;
    const clock = { now: () => now };
    const dead = new HostLease(d0, clock, logger, 5000);
    const live = new HostLease(d0, clock, logger, 5000);
    await dead.register();
    await live.register();
    const runs = new RunRepository(d0);
    const row = (id: string, hostId: string): RunRow => ({
      id,
      owner: 'local',
      goal: null,
      status: 'running',
      plan: null,
      config: '{}',
      inputs: '{}',
      files: null,
      gate: null,
      summary: null,
      error: null,
      result: null,
      parent_run_id: null,
      origin: 'api',
      sandbox: '{"mode":"off"}',
      workflow_id: null,
      workflow_version: null,
      last_seq: 0,
      created_at: new Date(now).toISOString(),
      updated_at: new Date(now).toISOString(),
      finished_at: null,
      host_id: hostId,
    });
    // the dead host stops renewing (no row change: as after a SIGKILL)
    (dead as unknown as { stopped: boolean }).stopped = true;
    for (let i = 0; i < 10; i++) await runs.insert(row(`dead-${i}`, dead.id));
    for (let i = 0; i < 3; i++) await runs.insert(row(`live-${i}`, live.id));
    // time passes: the live host renews its lease, the dead one does not
    now += 6000;
    expect(await live.renew()).toBe(true);
    // three sweepers, each with its own connections, at once
    const sweepers = [d0, d1, d2].map((db) => {
      const lease = new HostLease(db, clock, logger, 5000);
      const deps = { events: new EventLog(db, clock), repo: new RunRepository(db), catalog: new ToolCatalog(), clock };
      lease.start(async (ids) => {
        for (const r of await deps.repo.listNonTerminal({ ids })) await interruptOrphan(deps, r);
      });
      return lease;
    });
    const swept = await Promise.all(sweepers.map((s) => s.sweep()));
    expect(new Set(swept.flat())).toEqual(new Set([dead.id]));
    const check = new EventLog(d0, clock);
    for (let i = 0; i < 10; i++) {
      expect((await runs.get(`dead-${i}`))?.status).toBe('interrupted');
      expect((await check.read(`dead-${i}`)).filter((e) => e.type === 'interrupted')).toHaveLength(1);
    }
    for (let i = 0; i < 3; i++) expect((await runs.get(`live-${i}`))?.status).toBe('running');
    // the dead host is recorded swept, so later sweeps leave it alone; a swept host learns it lost its lease
    expect(await sweepers[0]?.expired()).toEqual([]);
    expect(await dead.renew()).toBe(false);
    // a task left waiting behind a run its host's answer claimed, when that host then died (its sweep
    // interrupted the run): the sweep of that host ends the task too; a task still parked, or one
    // behind a live host's run, is left alone
    const tasks = new SharedTaskStore(d0);
    const task = (id: string, runId: string) => ({ id, owner: 'local', kind: 'workflow', priority: 'normal', state: 'waiting', workflow_id: 'wf', workflow_version: 1, run_id: runId, schedule_id: null, trigger_id: null, inputs: '{}', permission_mode: 'full-access', submitted_ms: now, started_ms: now, finished_ms: null, output_text: '', output_truncated: 0, error_code: null, error_message: null, files: null, host_id: null, released_ms: now, kill_requested: 0 });
    await runs.insert({ ...row('parked-0', dead.id), status: 'awaiting_input', gate: '{"id":"g","kind":"input"}', host_id: null });
    await d0.withTables<{ bg_tasks: ReturnType<typeof task> }>().insertInto('bg_tasks').values([task('t-dead', 'dead-0'), task('t-live', 'live-0'), task('t-parked', 'parked-0')]).execute();
    const ended = await tasks.transaction((trx) => tasks.interruptOrphanedWaiting(trx, [dead.id], now, { code: 'task_interrupted', message: 'gone' }));
    expect(ended.map((t) => t.id)).toEqual(['t-dead']);
    expect((await tasks.states(['t-dead', 't-live', 't-parked'])).sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: 't-dead', state: 'interrupted' },
      { id: 't-live', state: 'waiting' },
      { id: 't-parked', state: 'waiting' },
    ]);
    for (const s of sweepers) await s.stop();
    await live.stop();
    for (const o of opened) await o.close();
  }, 120_000);

  it("a backend key and an MCP server's env value changed on one host are used by the other's next call, without a restart", async () => {
    const url = await server.createDatabase();
    const llm = await startScriptedOpenAI();
    const fixture = join(import.meta.dirname, '../mcp/fixtures/dynamic-server.mjs');
    const home = mkdtempSync(join(tmpdir(), 'fengyu-shared-vault-'));
    homes.push(home);
    const fixtureLog = join(home, 'fixture.log');
    const keys = ['sk-first-7c1d', 'sk-rotated-8e2f', 'sk-again-9a3b'];
    const values = ['mcp-first-41ab', 'mcp-changed-52cd'];
    const backend = (apiKey?: string) => ({ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted', ...(apiKey ? { apiKey } : {}) });
    const fx = (value: string) => ({ command: process.execPath, args: [fixture], env: { FIXTURE_VALUE: value, FIXTURE_LOG: '[redacted]' } });
    const a = await host(url);
    const first = await a.api('PATCH', '/api/settings', { backends: [backend(keys[0])], defaultBackend: 'local', mcpServers: { fx: { ...fx(values[0] as string), env: { FIXTURE_VALUE: values[0], FIXTURE_LOG: fixtureLog } } } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const lines: string[] = [];
    const b = await host(url, {}, pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) }));
    const seen: unknown[] = [];
    const chat = async () => {
      llm.push({ text: 'hello' });
      const res = await fetch(`${b.host.url}/api/chat`, { method: 'POST', headers: { 'x-fengyu-token': TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hi' }) });
      seen.push(await res.text());
      return llm.headers.at(-1)?.authorization;
    };
    const run = async (steps: unknown[]) => {
      const started = await b.api('POST', '/api/agent/run', { workflow: { steps }, config: { planApproval: false, permissionMode: 'full-access' } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      return started.body.runId as string;
    };
    const detail = async (runId: string) => {
      await b.waitFor(runId, 'complete');
      const body = (await b.api('GET', `/api/agent/runs/${runId}`)).body;
      seen.push(body);
      return body.executions as Array<{ stepId: string; result: unknown }>;
    };
    const envNotes = () => readFileSync(fixtureLog, 'utf8').split('\n').filter((l) => l.startsWith('env '));
    expect(await chat()).toBe(`Bearer ${keys[0]}`);
    expect((await detail(await run([{ id: 'env', tool: 'fx__env', arguments: {} }])))[0]?.result).toBe('[redacted:mcp:fx/env/FIXTURE_VALUE]');
    // A rotates the key (the settings document keeps its marker): B's next call sends the new one, and again
    expect((await a.api('PATCH', '/api/settings', { backends: [backend(keys[1])] })).status).toBe(200);
    expect(await chat()).toBe(`Bearer ${keys[1]}`);
    expect((await a.api('PATCH', '/api/settings', { backends: [backend(keys[2])] })).status).toBe(200);
    // B saving another section keeps the key A set (not the copy B held before)
    expect((await b.api('PATCH', '/api/settings', { memory: { enabled: false } })).status).toBe(200);
    expect(await chat()).toBe(`Bearer ${keys[2]}`);
    // A changes the server's env value: B's next call connects with the new value (a call in flight
    // finishing on the old connection: test/mcp/mcp-source.test.ts)
    expect((await a.api('PATCH', '/api/settings', { mcpServers: { fx: fx(values[1] as string) } })).status).toBe(200);
    expect((await detail(await run([{ id: 'env', tool: 'fx__env', arguments: {} }])))[0]?.result).toBe('[redacted:mcp:fx/env/FIXTURE_VALUE]');
    expect(envNotes()).toEqual([`env ${values[0]}`, `env ${values[1]}`]);
    // A removes the key: B sends none, not the old one
    expect((await a.api('PATCH', '/api/settings', { backends: [backend()] })).status).toBe(200);
    expect(await chat()).toBeUndefined();
    // B never shows or logs a value: its settings, responses, run details and log hold markers only
    seen.push((await b.api('GET', '/api/settings')).body);
    const shown = JSON.stringify(seen) + lines.join('');
    expect(lines.length).toBeGreaterThan(0);
    for (const v of [...keys, ...values]) expect(shown).not.toContain(v);
    await llm.close();
  }, 120_000);

  it('a run parked at a gate outlives its host: another host takes the answer (one of two racing answers) and runs it to its end', async () => {
    const url = await server.createDatabase();
    const a = await host(url);
    const form = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const asking = await a.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'ask', kind: 'input', title: 'How many?', form }, { id: 'use', tool: 'echo', arguments: { value: '{{node.ask.result.n}}' }, dependsOn: ['ask'] }] }, config: { planApproval: false } });
    const reviewing = await a.api('POST', '/api/agent/run', { goal: 'review me', workflow: { steps: [{ id: 'only', tool: 'echo', arguments: { value: 'approved' } }] } });
    // a workflow's secret input (kept in the vault by A, in A's memory): the host that answers reads it from the database
    const wf = await a.api('POST', '/api/workflows', {
      name: 'Secret after a question',
      inputSchema: { type: 'object', properties: { pw: { type: 'string', format: 'password' } }, required: ['pw'] },
      plan: { steps: [{ id: 'ask', kind: 'input', title: 'Go on?', form }, { id: 'rev', tool: 'execute_command', arguments: { command: 'printf %s {{inputs.pw}} | rev' }, dependsOn: ['ask'] }] },
    });
    const [input, review] = [asking.body.runId as string, reviewing.body.runId as string];
    await a.waitFor(input, 'input_requested');
    await a.waitFor(review, 'plan_approval_requested');
    // while A runs them, another host answers neither (it would run them a second time)
    const b = await host(url);
    // started once B runs: its value is not among those B read at its start
    const secretRun = (await a.api('POST', `/api/workflows/${wf.body.id}/run`, { inputs: { pw: 'pw-parked-9d2e' }, config: { permissionMode: 'full-access' } })).body.runId as string;
    await a.waitFor(secretRun, 'input_requested');
    expect((await b.api('POST', `/api/agent/${input}/input`, { values: { n: 5 } })).body.error?.code).toBe('no_pending_input');
    expect((await b.api('POST', `/api/agent/${review}/approve`, {})).status).toBe(409);
    // A stops: both wait on (not interrupted), their items stay in the inbox
    await a.close();
    hosts.splice(hosts.indexOf(a), 1);
    expect([await statusOf(b, input), await statusOf(b, review)]).toEqual(['awaiting_input', 'awaiting_plan_approval']);
    expect(((await b.api('GET', '/api/inbox')).body.items as Array<{ runId: string }>).map((i) => i.runId).sort()).toEqual([input, review, secretRun].sort());
    // B takes the input's answer (a bad one is refused first) and runs the rest of it
    expect((await b.api('POST', `/api/agent/${input}/input`, { values: { n: 'x' } })).status).toBe(400);
    expect((await b.api('POST', `/api/agent/${input}/input`, { values: { n: 5 } })).status).toBe(200);
    await b.waitFor(input, 'complete');
    const done = (await b.api('GET', `/api/agent/runs/${input}`)).body;
    expect(done.status).toBe('completed');
    expect(done.executions.find((e: { stepId: string }) => e.stepId === 'use').result).toMatchObject({ echoed: 5 });
    expect((await b.api('POST', `/api/agent/${secretRun}/input`, { values: { n: 1 } })).status).toBe(200);
    await b.waitFor(secretRun, 'complete');
    const revved = (await b.api('GET', `/api/agent/runs/${secretRun}`)).body;
    expect(revved.executions.find((e: { stepId: string }) => e.stepId === 'rev').result).toMatchObject({ stdout: [...'pw-parked-9d2e'].reverse().join('') });
    // a restarted host and B answer the plan review at once: one takes it, the other is told it is gone
    const c = await host(url);
    const answers = await Promise.all([b.api('POST', `/api/agent/${review}/approve`, {}), c.api('POST', `/api/agent/${review}/approve`, {})]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = answers[0]?.status === 200 ? b : c;
    await winner.waitFor(review, 'complete');
    const reviewed = await winner.host.ctx.events.read(review);
    expect(reviewed.filter((e) => e.type === 'step_start')).toHaveLength(1);
    expect(reviewed.filter((e) => e.type === 'plan_approved')).toHaveLength(1);
    expect((await c.api('GET', '/api/inbox')).body.items).toEqual([]);
  }, 120_000);

  it('a background task whose run waits at an input outlives its host: the answering host takes the task and finishes it, once', async () => {
    const url = await server.createDatabase();
    const a = await host(url);
    const form = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const made = await a.api('POST', '/api/workflows', {
      name: 'Ask then echo',
      inputSchema: { type: 'object', properties: {} },
      plan: { steps: [{ id: 'ask', kind: 'input', title: 'How many?', form }, { id: 'use', tool: 'echo', arguments: { value: '{{node.ask.result.n}}' }, dependsOn: ['ask'] }] },
    });
    expect((await a.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision })).status).toBe(200);
    const tasks: string[] = [];
    for (let i = 0; i < 4; i++) tasks.push((await a.api('POST', '/api/agent/tasks', { workflowId: made.body.id, permissionMode: 'full-access' })).body.id as string);
    const items = await until(async () => {
      const list = (await a.api('GET', '/api/inbox')).body.items as Array<{ id: string; runId: string }>;
      return list.length === 4 ? list : undefined;
    }, 'the four tasks’ inputs in the inbox');
    const b = await host(url);
    const c = await host(url);
    // A stops: the tasks wait on (not interrupted), holding no running slot; their items stay
    await a.close();
    hosts.splice(hosts.indexOf(a), 1);
    for (const id of tasks) expect((await b.api('GET', `/api/agent/tasks/${id}`)).body.state).toBe('waiting');
    await until(async () => (await b.api('GET', '/api/agent/tasks/capacity')).body.running === 0, 'no running slot held by the waiting tasks');
    const runOf = async (id: string) => (await b.api('GET', `/api/agent/tasks/${id}`)).body.runId as string;
    const [first, second, third] = [await runOf(tasks[0] as string), await runOf(tasks[1] as string), await runOf(tasks[2] as string)];
    const itemOf = (runId: string) => (items.find((i) => i.runId === runId) as { id: string }).id;

    // the fourth is killed on C: its parked run ends cancelled, its item goes, the task ends cancelled
    const fourth = await runOf(tasks[3] as string);
    expect((await c.api('POST', `/api/agent/tasks/${tasks[3]}/kill`)).body.state).toBe('cancelled');
    expect((await b.api('GET', `/api/agent/runs/${fourth}`)).body.status).toBe('cancelled');
    expect(((await b.api('GET', '/api/inbox')).body.items as Array<{ runId: string }>).map((i) => i.runId)).not.toContain(fourth);

    // B answers the first through the inbox: the run finishes there with the value, the task is done
    expect((await b.api('POST', `/api/inbox/${itemOf(first)}`, { values: { n: 5 } })).status).toBe(200);
    const done = (await b.api('GET', `/api/agent/tasks/${tasks[0]}/output?timeoutMs=20000`)).body;
    expect(done.state, JSON.stringify(done)).toBe('completed');
    expect((await b.api('GET', `/api/agent/runs/${first}`)).body.executions.find((e: { stepId: string }) => e.stepId === 'use').result).toMatchObject({ echoed: 5 });
    expect(b.tools.calls.get('echo')).toBe(1);

    // hostile: B and C answer the second at once: one takes it (and its task), the other is a 409; the step after runs once
    const answers = await Promise.all([b.api('POST', `/api/inbox/${itemOf(second)}`, { values: { n: 7 } }), c.api('POST', `/api/inbox/${itemOf(second)}`, { values: { n: 8 } })]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const ended = (await c.api('GET', `/api/agent/tasks/${tasks[1]}/output?timeoutMs=20000`)).body;
    expect(ended.state, JSON.stringify(ended)).toBe('completed');
    const events = await c.host.ctx.events.read(second);
    expect(events.filter((e) => e.type === 'step_start' && (e as { stepId?: string }).stepId === 'use')).toHaveLength(1);
    expect((b.tools.calls.get('echo') ?? 0) + (c.tools.calls.get('echo') ?? 0)).toBe(2);

    // the third one's expiry still holds: the expiry of the host that runs it (what its timer calls) fails the step, the task ends failed
    expect(await b.host.ctx.agent.expireGate(third, itemOf(third))).toBe(true);
    const expired = (await b.api('GET', `/api/agent/tasks/${tasks[2]}/output?timeoutMs=20000`)).body;
    expect(expired.state, JSON.stringify(expired)).toBe('failed');
    expect(JSON.stringify((await b.api('GET', `/api/agent/runs/${third}`)).body.executions)).toContain('gate_expired');
    expect((await c.api('GET', '/api/inbox')).body.items).toEqual([]);
  }, 120_000);

  it('a background task waiting at a gate gives its slot back while its host is up; the answer on either host takes it back, once', async () => {
    const url = await server.createDatabase();
    // one running slot for the owner across the database, one task body per host
    const one = { FENGYU_TASK_WORKER_SLOTS: '1', FENGYU_TASK_OWNER_MAX_RUNNING: '1' };
    const a = await host(url, one);
    const b = await host(url, one);
    const form = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const publish = async (name: string, steps: unknown[]) => {
      const made = await a.api('POST', '/api/workflows', { name, inputSchema: { type: 'object', properties: {} }, plan: { steps } });
      expect((await a.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision })).status).toBe(200);
      return made.body.id as string;
    };
    const asking = await publish('Ask then echo', [{ id: 'ask', kind: 'input', title: 'How many?', form }, { id: 'use', tool: 'echo', arguments: { value: '{{node.ask.result.n}}' }, dependsOn: ['ask'] }]);
    const quick = await publish('Echo at once', [{ id: 'say', tool: 'echo', arguments: { value: 'quick' } }]);
    const submit = async (h: TestHost, workflowId: string) => {
      const r = await h.api('POST', '/api/agent/tasks', { workflowId, permissionMode: 'full-access' });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return r.body.id as string;
    };
    const row = (id: string) => a.host.ctx.db.selectFrom('bg_tasks').select(['state', 'host_id']).where('id', '=', id).executeTakeFirst();
    const job = async (id: string) => {
      const r = await sql`select state from pgboss.job where id = ${id}::uuid`.execute(a.host.ctx.db);
      return (r.rows[0] as { state?: string } | undefined)?.state;
    };
    const capacity = async () => (await a.api('GET', '/api/agent/tasks/capacity')).body as { running: number; ownedRunning: number; queued: number };
    const itemOf = (runId: string) => until(async () => ((await a.api('GET', '/api/inbox')).body.items as Array<{ id: string; runId: string }>).find((i) => i.runId === runId)?.id, 'the task’s input in the inbox');
    const output = async (h: TestHost, id: string) => (await h.api('GET', `/api/agent/tasks/${id}/output?timeoutMs=20000`)).body as { state: string; runId: string };
    const useStarts = async (runId: string) => (await a.host.ctx.events.read(runId)).filter((e) => e.type === 'step_start' && (e as { stepId?: string }).stepId === 'use').length;
    const echoes = () => (a.tools.calls.get('echo') ?? 0) + (b.tools.calls.get('echo') ?? 0);

    // A waits at its input: recorded waiting (naming no host), its job completed, its slot free
    const first = await submit(a, asking);
    const firstItem = await itemOf(first);
    await until(async () => (await row(first))?.state === 'waiting', 'the first task recorded waiting');
    expect(await row(first)).toEqual({ state: 'waiting', host_id: null });
    expect(await job(first)).toBe('completed');
    expect((await a.api('GET', `/api/agent/tasks/${first}`)).body.state).toBe('waiting');
    // the next task starts and ends while A still waits
    const next = await submit(a, quick);
    expect((await output(a, next)).state).toBe('completed');
    expect((await row(first))?.state).toBe('waiting');
    await until(async () => (await capacity()).running === 0, 'no slot held while the first task waits');

    // answered through the inbox on its own host: it takes the task back and finishes with the value, once
    expect((await a.api('POST', `/api/inbox/${firstItem}`, { values: { n: 5 } })).status).toBe(200);
    expect((await output(a, first)).state).toBe('completed');
    expect((await a.api('GET', `/api/agent/runs/${first}`)).body.executions.find((e: { stepId: string }) => e.stepId === 'use').result).toMatchObject({ echoed: 5 });
    expect(await useStarts(first)).toBe(1);
    expect(echoes()).toBe(2);

    // answered on the other host while the first is up: that host takes it and finishes it, once
    const second = await submit(a, asking);
    const secondItem = await itemOf(second);
    await until(async () => (await row(second))?.state === 'waiting', 'the second task recorded waiting');
    expect((await b.api('POST', `/api/inbox/${secondItem}`, { values: { n: 6 } })).status).toBe(200);
    expect((await output(a, second)).state).toBe('completed');
    expect(await useStarts(second)).toBe(1);
    expect(echoes()).toBe(3);

    // hostile: both hosts answer at once: one 200, one 409; the step after the gate runs once
    const third = await submit(b, asking);
    const thirdItem = await itemOf(third);
    await until(async () => (await row(third))?.state === 'waiting', 'the third task recorded waiting');
    const answers = await Promise.all([a.api('POST', `/api/inbox/${thirdItem}`, { values: { n: 7 } }), b.api('POST', `/api/inbox/${thirdItem}`, { values: { n: 8 } })]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect((await output(b, third)).state).toBe('completed');
    expect(await useStarts(third)).toBe(1);
    expect(echoes()).toBe(4);

    // hostile: both hosts' expiry timers at once: one expires the gate, the other finds it gone; the task ends failed
    const fifth = await submit(a, asking);
    const fifthItem = await itemOf(fifth);
    await until(async () => (await row(fifth))?.state === 'waiting', 'the fifth task recorded waiting');
    const expiries = await Promise.all([a.host.ctx.agent.expireGate(fifth, fifthItem), b.host.ctx.agent.expireGate(fifth, fifthItem)]);
    expect(expiries.sort()).toEqual([false, true]);
    expect((await output(a, fifth)).state).toBe('failed');
    expect(JSON.stringify((await a.api('GET', `/api/agent/runs/${fifth}`)).body.executions)).toContain('gate_expired');
    expect(await useStarts(fifth)).toBe(0);

    // hostile: a kill of a waiting task on its own host ends it cancelled, its run cancelled, its item gone
    const fourth = await submit(a, asking);
    await itemOf(fourth);
    await until(async () => (await row(fourth))?.state === 'waiting', 'the fourth task recorded waiting');
    expect((await a.api('POST', `/api/agent/tasks/${fourth}/kill`)).body.state).toBe('cancelled');
    expect((await a.api('GET', `/api/agent/runs/${fourth}`)).body.status).toBe('cancelled');
    expect((await a.api('GET', '/api/inbox')).body.items).toEqual([]);
    // the slots are all given back (never below none), and the queue still runs a task
    await until(async () => (await capacity()).running === 0, 'every slot given back');
    expect(await capacity()).toMatchObject({ running: 0, ownedRunning: 0, queued: 0 });
    expect((await output(b, await submit(b, quick))).state).toBe('completed');
    expect(echoes()).toBe(5);
  }, 120_000);
});
