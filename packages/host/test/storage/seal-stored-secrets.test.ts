import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock';
import { openVault } from '../../src/secrets/secrets.domain';
import { type Db, migrate, type OpenedDatabase, openDatabase, pendingMigrations } from '../../src/storage/database';
import { filesHolding } from '../support/home-bytes';
import { openTestDatabase, stopSharedPostgres, testDialects } from '../support/postgres';

/**
 * Migration 260 (docs/secrets.md): rows written before write-only values were sealed. Seeded as
 * earlier versions wrote them — an e-mail step's password typed into a workflow's draft, version,
 * canvas graph and a run's plan (a loop body's too), a plan approval in the inbox, a workflow
 * input declared `format: "password"` in a run's inputs, goal, events and step result — the
 * migration leaves the marker in every row and, on SQLite, no copy in the database file or WAL.
 */

const TYPED = 'typed-smtp-pass-5d2e';
const LOOPED = 'loop-body-pass-91aa';
const INPUT = 'input-pass-c0ffee-42';
const NAME = '260-seal-stored-secrets';
const TASKS = '270-seal-task-inputs';
/** Secret inputs a task, a schedule and a webhook trigger kept in clear (migration 270 and the start-up move). */
const HELD = { queued: 'held-queued-task-7a1', ran: 'held-ran-task-7a2', schedule: 'held-schedule-7a3', trigger: 'held-trigger-7a4' };
const at = '2026-03-01T00:00:00.000Z';

const manifest = {
  id: 'fan.summer.email',
  aiTools: [{ name: 'email_account_save', method: 'email_account_save' }],
  rpc: { methods: { email_account_save: { inputSchema: { type: 'object', properties: { id: { type: 'string' }, secret: { type: 'string', writeOnly: true } } } } } },
};
const save = (id: string, secret: string) => ({ id, tool: 'email_account_save', arguments: { id: 'work', secret } });
const plan = { goal: 'Set up mail', steps: [save('acct', TYPED), { id: 'each', kind: 'forEach', items: ['a'], steps: [save('inner', LOOPED)] }, save('ref', '{{inputs.pw}}')] };
const graph = { nodes: [{ id: 'acct', type: 'tool', tool: { name: 'email_account_save' }, data: { arguments: { id: 'work', secret: TYPED } } }], edges: [] };
const inputSchema = { type: 'object', properties: { pw: { type: 'string', format: 'password' }, who: { type: 'string' } } };

async function seed(db: Db): Promise<void> {
  await db.deleteFrom('schema_migrations').where('name', 'in', [NAME, TASKS]).execute();
  await db.insertInto('plugins').values({ id: 'fan.summer.email', name: 'E-mail', version: '1.0.0', description: '', enabled: 1, manifest: JSON.stringify(manifest), root: '/nowhere', bundled: 1, installed_at: at, updated_at: at }).execute();
  const wf = { owner: 'default', name: 'Mail', description: 'd', input_schema: JSON.stringify(inputSchema), plan: JSON.stringify(plan), graph: JSON.stringify(graph), layout: null, content_hash: 'h' };
  await db.insertInto('workflows').values({ id: 'wf1', ...wf, revision: 1, published_version: 1, created_at: at, updated_at: at }).execute();
  const { owner: _owner, ...version } = wf;
  await db.insertInto('workflow_versions').values({ workflow_id: 'wf1', version: 1, revision: 1, ...version, published_at: at }).execute();
  const run = { owner: 'default', config: '{}', files: '[]', gate: null, summary: null, error: null, result: null, parent_run_id: null, origin: 'workflow', sandbox: '{}', workflow_id: 'wf1', workflow_version: 1, last_seq: 2, created_at: at, updated_at: at, finished_at: null };
  await db.insertInto('runs').values({ id: 'r1', ...run, goal: `Sign in with ${INPUT}`, status: 'awaiting_plan_approval', plan: JSON.stringify({ ...plan, goal: `Sign in with ${INPUT}` }), inputs: JSON.stringify({ pw: INPUT, who: 'ann' }) }).execute();
  await db.insertInto('run_events').values({ run_id: 'r1', seq: 1, type: 'run_created', data: JSON.stringify({ goal: `Sign in with ${INPUT}` }), ts: at }).execute();
  await db.insertInto('run_events').values({ run_id: 'r1', seq: 2, type: 'step_start', data: JSON.stringify({ stepId: 'x', arguments: { command: `printf %s '${INPUT}'` } }), ts: at }).execute();
  await db.insertInto('step_executions').values({ run_id: 'r1', step_id: 'x', status: 'done', attempts: 1, result: JSON.stringify({ stdout: INPUT }), error: null, started_at: at, finished_at: at, duration_ms: 1, fingerprint: 'f', reused: 0 }).execute();
  const item = { owner: 'default', run_id: 'r1', step_id: null, title: 'Set up mail', workflow_id: 'wf1', workflow_name: 'Mail', trigger: 'manual', created_at: at, expires_at: null, state: 'pending', settled_at: null };
  await db.insertInto('inbox_items').values({ id: 'g1', kind: 'plan_approval', ...item, body: JSON.stringify({ plan }) }).execute();
  const task = { owner: 'default', kind: 'workflow', priority: 'normal', workflow_id: 'wf1', workflow_version: 1, schedule_id: null, trigger_id: null, permission_mode: 'full-access', submitted_ms: 1, started_ms: null, output_text: '', output_truncated: 0, error_code: null, error_message: null };
  await db.insertInto('bg_tasks').values({ id: 't-queued', ...task, state: 'queued', run_id: null, finished_ms: null, inputs: JSON.stringify({ pw: HELD.queued, who: 'ann' }) }).execute();
  await db.insertInto('bg_tasks').values({ id: 't-ran', ...task, state: 'completed', run_id: 'r1', finished_ms: 2, inputs: JSON.stringify({ pw: HELD.ran }) }).execute();
  const recurrence = JSON.stringify({ kind: 'daily', time: '09:00', timeZone: 'UTC' });
  await db.insertInto('schedules').values({ id: 'sch1', owner: 'default', workflow_id: 'wf1', recurrence, permission_mode: 'full-access', inputs: JSON.stringify({ pw: HELD.schedule }), created_at: at, anchor_ms: 1, state: 'active', sandboxed: 0, updated_at: at }).execute();
  await db.insertInto('webhook_triggers').values({ id: 'wh1', owner: 'default', workflow_id: 'wf1', name: 'Hook', defaults: JSON.stringify({ pw: HELD.trigger }), permission_mode: 'full-access', secret_sha256: 'x', state: 'active', created_sandboxed: 0, created_at: at }).execute();
  // a run of no secret-taking tool and no secret input is left as it is
  await db.insertInto('runs').values({ id: 'r2', ...run, workflow_id: null, workflow_version: null, goal: 'plain', status: 'completed', plan: JSON.stringify({ steps: [{ id: 's', tool: 'execute_command', arguments: { command: 'echo typed-but-not-secret' } }] }), inputs: JSON.stringify({ pw: 'not-a-workflow-input' }) }).execute();
}

async function dump(db: Db): Promise<string> {
  const tables = ['workflows', 'workflow_versions', 'runs', 'run_events', 'step_executions', 'inbox_items', 'bg_tasks', 'schedules', 'webhook_triggers'];
  return JSON.stringify(await Promise.all(tables.map((t) => db.selectFrom(t).selectAll().execute())));
}

async function expectSealed(opened: OpenedDatabase): Promise<void> {
  const db = opened.db;
  expect(await pendingMigrations(db)).toEqual([NAME, TASKS]);
  expect(await migrate(db)).toEqual([NAME, TASKS]);
  // a started task's value is not needed any more: the marker; the others wait for the vault's key
  const held = await dump(db);
  expect(held).not.toContain(HELD.ran);
  for (const v of [HELD.queued, HELD.schedule, HELD.trigger]) expect(held).toContain(v);
  // the host's start moves them into the vault under their holder's name
  const vault = await openVault(opened, { home: mkdtempSync(join(home, 'vault-')) }, systemClock);
  expect([vault.getInternal('default', 'task:t-queued/input/pw'), vault.getInternal('default', 'schedule:sch1/input/pw'), vault.getInternal('default', 'trigger:wh1/input/pw')]).toEqual([HELD.queued, HELD.schedule, HELD.trigger]);
  const all = await dump(db);
  for (const v of [TYPED, LOOPED, INPUT, ...Object.values(HELD)]) expect(all).not.toContain(v);
  const row = (await db.selectFrom('bg_tasks').select('inputs').where('id', '=', 't-queued').executeTakeFirstOrThrow()) as { inputs: string };
  expect(JSON.parse(row.inputs)).toEqual({ pw: '[redacted]', who: 'ann' });
  const wf = (await db.selectFrom('workflows').select(['plan', 'graph']).where('id', '=', 'wf1').executeTakeFirstOrThrow()) as { plan: string; graph: string };
  const steps = JSON.parse(wf.plan).steps;
  // the marker where a value was typed; a whole reference is kept
  expect([steps[0].arguments.secret, steps[1].steps[0].arguments.secret, steps[2].arguments.secret]).toEqual(['[redacted]', '[redacted]', '{{inputs.pw}}']);
  expect(JSON.parse(wf.graph).nodes[0].data.arguments.secret).toBe('[redacted]');
  const r1 = (await db.selectFrom('runs').select(['goal', 'inputs']).where('id', '=', 'r1').executeTakeFirstOrThrow()) as { goal: string; inputs: string };
  expect([r1.goal, JSON.parse(r1.inputs)]).toEqual(['Sign in with [redacted]', { pw: '[redacted]', who: 'ann' }]);
  const r2 = (await db.selectFrom('runs').select(['plan', 'inputs']).where('id', '=', 'r2').executeTakeFirstOrThrow()) as { plan: string; inputs: string };
  expect(r2.plan).toContain('typed-but-not-secret');
  expect(JSON.parse(r2.inputs)).toEqual({ pw: 'not-a-workflow-input' });
}

const home = mkdtempSync(join(tmpdir(), 'fengyu-migration-260-'));
afterAll(async () => {
  await stopSharedPostgres();
  rmSync(home, { recursive: true, force: true });
});

describe('migration 260: write-only values in rows written before they were sealed', () => {
  it('on SQLite: every row keeps the marker, and neither the database file nor its WAL holds a value', async () => {
    const opened = openDatabase(home);
    try {
      await migrate(opened.db);
      await seed(opened.db);
      // the seeded rows are on disk (the test would find them without the migration)
      opened.raw.pragma('wal_checkpoint(passive)');
      expect(filesHolding(home, TYPED).length).toBeGreaterThan(0);
      await expectSealed(opened);
      // still open: the WAL and the freed pages hold no old copy either (the file was compacted)
      for (const v of [TYPED, LOOPED, INPUT, ...Object.values(HELD)]) expect(filesHolding(home, v), v).toEqual([]);
    } finally {
      await opened.close();
    }
    for (const v of [TYPED, LOOPED, INPUT, ...Object.values(HELD)]) expect(filesHolding(home, v), v).toEqual([]);
  });

  it.skipIf(!testDialects().includes('postgres'))('on PostgreSQL: every row keeps the marker', async () => {
    const opened = await openTestDatabase('postgres');
    try {
      await seed(opened.db);
      await expectSealed(opened);
    } finally {
      await opened.close();
    }
  });
});
