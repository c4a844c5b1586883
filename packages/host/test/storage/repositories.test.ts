import { z } from 'zod';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorOutboxRepository, insertOutbox } from '../../src/agent/error-outbox.repository';
import { type RunRow, RunRepository } from '../../src/agent/run.repository';
import { ConversationRepository } from '../../src/chat/conversation.repository';
import { EventLog } from '../../src/events/event-log';
import { FileRepository } from '../../src/files/file.repository';
import { MemoryRepository } from '../../src/memory/memory.repository';
import { PluginRepository } from '../../src/plugins/plugin.repository';
import { NEVER_FIRED, type ScheduleRow, ScheduleRepository } from '../../src/schedules/schedule.repository';
import { SettingsStore } from '../../src/settings/settings.store';
import { dialectOf, migrate, type OpenedDatabase, pendingMigrations } from '../../src/storage/database';
import { type TaskRecord, SqliteTaskStore } from '../../src/tasks/task.store';
import { WebhookRepository } from '../../src/webhooks/webhook.repository';
import { WorkflowRepository } from '../../src/workflows/workflow.repository';
import { openTestDatabase, stopSharedPostgres, testDialects } from '../support/postgres';

/** Every repository on both engines: the same calls, the same answers. */

afterAll(() => stopSharedPostgres());

const clock = { now: () => Date.parse('2026-03-01T00:00:00Z') };

function runRow(id: string, over: Partial<RunRow> = {}): RunRow {
  const at = '2026-03-01T00:00:00.000Z';
  return {
    id,
    owner: 'alice',
    goal: 'Split the Invoices',
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
    sandbox: 'none',
    workflow_id: null,
    workflow_version: null,
    last_seq: 0,
    created_at: at,
    updated_at: at,
    finished_at: null,
    ...over,
  };
}

function task(id: string, over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id,
    ownerId: 'alice',
    kind: 'workflow',
    priority: 'normal',
    state: 'queued',
    workflowId: 'wf1',
    workflowVersion: 1,
    inputs: { n: 1, text: '中文' },
    permissionMode: 'ask',
    submittedMs: 1_772_323_200_000,
    output: { text: '', truncated: false },
    ...over,
  } as TaskRecord;
}

describe.each(testDialects())('repositories on %s', (dialect) => {
  let opened: OpenedDatabase;

  beforeEach(async () => {
    opened = await openTestDatabase(dialect);
  });
  afterEach(async () => {
    await opened.close();
  });

  it('migrates once; a second migrate applies nothing', async () => {
    expect(dialectOf(opened.db)).toBe(dialect);
    expect(await pendingMigrations(opened.db)).toEqual([]);
    expect(await migrate(opened.db)).toEqual([]);
  });

  it('appends events and changes the run in one transaction; a failing change leaves neither', async () => {
    const runs = new RunRepository(opened.db);
    const log = new EventLog(opened.db, clock);
    await log.commit('r1', [{ type: 'run_created', goal: 'g', status: 'running', origin: 'api' }], (trx) => runs.insert(runRow('r1'), trx));
    await expect(
      log.commit('r1', [{ type: 'cancelled', reason: 'x' } as never], async (trx) => {
        await runs.update('r1', { status: 'cancelled' }, trx);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await runs.get('r1'))?.status).toBe('running');
    expect((await log.read('r1')).map((e) => e.seq)).toEqual([1]);
    // the sequence continues after the rolled-back append
    const [e2] = await log.commit('r1', [{ type: 'cancelled', reason: 'y' } as never], (trx) => runs.update('r1', { status: 'cancelled' }, trx));
    expect(e2?.seq).toBe(2);
    // a second log (another process) continues the same sequence
    const other = new EventLog(opened.db, clock);
    const [e3] = await other.commit('r1', [{ type: 'interrupted', reason: 'z' } as never]);
    expect(e3?.seq).toBe(3);
    expect((await runs.get('r1'))?.status).toBe('cancelled');
  });

  it('lists runs newest first with a case-insensitive, wildcard-safe search and steps as executions', async () => {
    const runs = new RunRepository(opened.db);
    await runs.insert(runRow('a', { created_at: '2026-03-01T00:00:01.000Z' }));
    await runs.insert(runRow('b', { goal: 'rename 100%_files', created_at: '2026-03-01T00:00:02.000Z' }));
    await runs.insert(runRow('c', { owner: 'bob' }));
    expect((await runs.list({ owner: 'alice', limit: 10 })).map((r) => r.id)).toEqual(['b', 'a']);
    expect((await runs.list({ owner: 'alice', limit: 10, q: 'INVOICES' })).map((r) => r.id)).toEqual(['a']);
    expect((await runs.list({ owner: 'alice', limit: 10, q: '100%_' })).map((r) => r.id)).toEqual(['b']);
    expect((await runs.list({ owner: 'alice', limit: 10, q: '%' })).map((r) => r.id)).toEqual(['b']);
    // status filters: one status, several without completed (read per status on SQLite and merged), with completed
    await runs.insert(runRow('d', { status: 'failed', created_at: '2026-03-01T00:00:03.000Z' }));
    await runs.insert(runRow('e', { status: 'cancelled', created_at: '2026-03-01T00:00:04.000Z' }));
    await runs.insert(runRow('f', { status: 'completed', created_at: '2026-03-01T00:00:04.000Z' }));
    await runs.insert(runRow('g', { status: 'failed', created_at: '2026-03-01T00:00:04.000Z' }));
    const ids = async (status: RunRow['status'][], limit = 10) => (await runs.list({ owner: 'alice', status, limit })).map((r) => r.id);
    expect(await ids(['failed'])).toEqual(['g', 'd']);
    expect(await ids(['failed', 'cancelled', 'running'])).toEqual(['g', 'e', 'd', 'b', 'a']);
    expect(await ids(['cancelled', 'failed'], 2)).toEqual(['g', 'e']);
    expect(await ids(['failed', 'completed'])).toEqual(['g', 'f', 'd']);
    expect(await ids(['interrupted'])).toEqual([]);
    await runs.upsertStep({ run_id: 'a', step_id: 's1', status: 'running', attempts: 1, result: null, error: null, started_at: 'x', finished_at: null, duration_ms: null, fingerprint: null, reused: 0 });
    await runs.upsertStep({ run_id: 'a', step_id: 's1', status: 'done', attempts: 1, result: '{"v":1}', error: null, started_at: 'x', finished_at: 'y', duration_ms: 12, fingerprint: 'f', reused: 0 });
    const [step] = await runs.steps('a');
    expect(step).toMatchObject({ stepId: 's1', status: 'done', attempts: 1, result: { v: 1 } });
    expect((await runs.listNonTerminal()).map((r) => r.id).sort()).toEqual(['a', 'b', 'c']);
  });

  it('stores tasks: group-committed upserts, newest first, interrupt live, prune finished', async () => {
    const store = new SqliteTaskStore(opened.db);
    await Promise.all([store.save(task('t1')), store.save(task('t2', { submittedMs: 1_772_323_200_001 })), store.save(task('t3', { ownerId: 'bob' }))]);
    await store.save(task('t1', { state: 'running', startedMs: 1_772_323_200_010, runId: 'r9' }));
    await store.save(task('t2', { state: 'completed', startedMs: 1, finishedMs: 1_772_323_200_020, output: { text: 'ok', truncated: true } }));
    expect(await store.get('t1')).toMatchObject({ state: 'running', runId: 'r9', startedMs: 1_772_323_200_010, inputs: { n: 1, text: '中文' } });
    expect(await store.get('t2')).toMatchObject({ state: 'completed', output: { text: 'ok', truncated: true } });
    expect((await store.list('alice', { limit: 10 })).map((t) => t.id)).toEqual(['t2', 't1']);
    expect((await store.list('alice', { limit: 10, before: { submittedMs: 1_772_323_200_001, id: 't2' } })).map((t) => t.id)).toEqual(['t1']);
    const live = await store.interruptLive(5, { code: 'host_stopped', message: 'stopped' });
    expect(live.map((t) => t.id).sort()).toEqual(['t1', 't3']);
    expect(await store.get('t3')).toMatchObject({ state: 'interrupted', finishedMs: 5, error: { code: 'host_stopped' } });
    await store.prune(1);
    expect(await store.get('t2')).toBeDefined();
    expect(await store.get('t1')).toBeUndefined();
  });

  it('claims a schedule occurrence exactly once among racing claimers', async () => {
    const repo = new ScheduleRepository(opened.db);
    const row: ScheduleRow = {
      id: 's1',
      owner: 'alice',
      workflow_id: 'wf1',
      recurrence: '{}',
      permission_mode: 'ask',
      inputs: '{}',
      created_at: 'x',
      anchor_ms: 1_772_323_200_000,
      next_run_ms: 1_772_323_260_000,
      expires_ms: null,
      ...NEVER_FIRED,
      sandboxed: 0,
      updated_at: 'x',
    };
    await repo.insert(row);
    expect(await repo.countLive('alice')).toBe(1);
    expect((await repo.due(1_772_323_260_000)).map((r) => r.id)).toEqual(['s1']);
    expect(await repo.earliest()).toBe(1_772_323_260_000);
    const patch = { nextRunMs: 1_772_323_320_000, state: 'active' as const, missed: 2, claimMs: 1_772_323_260_000, at: 1_772_323_260_500 };
    const wins = await Promise.all(Array.from({ length: 8 }, () => repo.claim('s1', 1_772_323_260_000, patch)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect((await repo.openClaims()).map((r) => r.id)).toEqual(['s1']);
    await repo.fired('s1', 'task-1', 1_772_323_261_000);
    expect(await repo.byId('s1')).toMatchObject({ trigger_count: 1, missed_fires: 2, claim_ms: null, last_task_id: 'task-1', next_run_ms: 1_772_323_320_000 });
  });

  it('claims a webhook event id once; a replay finds the first delivery', async () => {
    const repo = new WebhookRepository(opened.db);
    await repo.insertTrigger({
      id: 'h1',
      owner: 'alice',
      workflow_id: 'wf1',
      name: 'n',
      defaults: '{}',
      permission_mode: 'ask',
      secret_sha256: 'd',
      state: 'active',
      created_sandboxed: 0,
      created_at: 'x',
      last_delivery_at: null,
    });
    const first = await repo.claim({ id: 'd1', triggerId: 'h1', acceptedAt: 'x', acceptedMs: 1, eventSha256: 'e' });
    expect(first).toEqual({ claimed: true });
    await repo.submitted('d1', 'task-1', 'QUEUED', { triggerId: 'h1', eventSha256: 'e' });
    const again = await repo.claim({ id: 'd2', triggerId: 'h1', acceptedAt: 'x', acceptedMs: 2, eventSha256: 'e' });
    expect(again).toEqual({ claimed: false, existing: { delivery_id: 'd1', task_id: 'task-1' } });
    expect(await repo.finished('task-1', 'COMPLETED', 'y', 3)).toBe(1);
    const page = await repo.page('h1', 10);
    expect(page.map((d) => [d.id, d.state, typeof d.seq])).toEqual([['d1', 'COMPLETED', 'number']]);
  });

  it("writes a failed run's error-workflow outbox row with its failure, once, and never for an error workflow's run", async () => {
    const runs = new RunRepository(opened.db);
    const log = new EventLog(opened.db, clock);
    const workflows = new WorkflowRepository(opened.db);
    const base = { owner: 'alice', description: '', input_schema: '{}', plan: '{}', graph: null, layout: null, content_hash: 'h', published_version: 1, revision: 1, created_at: 'x', updated_at: 'x' };
    await workflows.insert({ id: 'notify', name: 'Notify', ...base });
    await workflows.insert({ id: 'job', name: 'Job', ...base, error_workflow_id: 'notify' });
    const at = '2026-03-01T00:00:01.000Z';
    const fail = (id: string, origin: string) =>
      log.commit(id, [{ type: 'error', message: 'm' }], async (trx) => {
        await runs.insert(runRow(id, { workflow_id: 'job', workflow_version: 1, origin, status: 'failed' }), trx);
        await insertOutbox(trx, id, { code: 'command_exit_nonzero', message: 'exit 3', stepId: 'boom', at });
      });
    await fail('r1', 'workflow-schedule');
    await fail('r2', 'workflow-error');
    // a failure whose transaction rolls back leaves no row either
    await expect(
      log.commit('r3', [{ type: 'error', message: 'm' }], async (trx) => {
        await runs.insert(runRow('r3', { workflow_id: 'job', status: 'failed' }), trx);
        await insertOutbox(trx, 'r3', { code: 'x', message: 'y', at });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    // the same run failing again (a resume) keeps its first row
    await log.commit('r1', [{ type: 'error', message: 'again' }], (trx) => insertOutbox(trx, 'r1', { code: 'other', message: 'again', at }));
    const outbox = new ErrorOutboxRepository(opened.db);
    const rows = await outbox.pending(10);
    expect(rows.map((r) => r.failed_run_id)).toEqual(['r1']);
    expect(rows[0]).toMatchObject({ owner: 'alice', error_workflow_id: 'notify', workflow_name: 'Job', error_code: 'command_exit_nonzero', error_message: 'exit 3', failed_step_id: 'boom', state: 'pending', attempts: 0 });
    // claimed once; another claimer waits until the claim is stale
    expect(await outbox.claim('r1', 1000, 0)).toBe(true);
    expect(await outbox.claim('r1', 2000, 500)).toBe(false);
    expect(await outbox.claim('r1', 3000, 1500)).toBe(true);
    await outbox.settle('r1', 'submitted', at);
    expect(await outbox.pending(10)).toEqual([]);
    expect(await outbox.claim('r1', 4000, 5000)).toBe(false);
    expect(await outbox.forRun('r1')).toMatchObject({ state: 'submitted', attempts: 2, claimed_ms: null, settled_at: at });
  });

  it('keeps workflows with optimistic revisions and immutable versions', async () => {
    const repo = new WorkflowRepository(opened.db);
    const base = { owner: 'alice', name: 'W', description: '', input_schema: '{}', plan: '{}', graph: null, layout: null, content_hash: 'h', published_version: null, created_at: 'x', updated_at: 'x' };
    await repo.insert({ id: 'w1', revision: 1, ...base });
    expect(await repo.updateAt('alice', 'w1', 1, { name: 'W2', revision: 2 })).toBe(true);
    expect(await repo.updateAt('alice', 'w1', 1, { name: 'W3', revision: 2 })).toBe(false);
    await repo.transaction(async (trx) => {
      expect(await repo.lastVersion('w1', trx)).toBe(0);
      await repo.insertVersion({ workflow_id: 'w1', version: 1, revision: 2, name: 'W2', description: '', input_schema: '{}', plan: '{}', graph: null, layout: null, content_hash: 'h', published_at: 'y' }, trx);
    });
    expect((await repo.version('w1', 1))?.name).toBe('W2');
    expect((await repo.list('alice')).map((w) => w.name)).toEqual(['W2']);
  });

  it('keeps conversations, memories, files, plugins and settings per owner', async () => {
    const chats = new ConversationRepository(opened.db);
    const c = await chats.create('alice', 't', 'b', 'm', 'x');
    await chats.append(c.id, [{ role: 'user', content: 'hello 你好' }], 'y');
    await chats.append(c.id, [{ role: 'assistant', content: 'hi' }], 'z');
    expect((await chats.messages(c.id)).map((m) => [m.seq, m.text])).toEqual([
      [1, 'hello 你好'],
      [2, 'hi'],
    ]);
    expect(await chats.remove('bob', c.id)).toBe(false);
    expect(await chats.remove('alice', c.id)).toBe(true);

    const memories = new MemoryRepository(opened.db);
    const m = await memories.add('alice', 'likes tea', 1_772_323_200_000);
    expect(await memories.count('alice')).toBe(1);
    expect(await memories.remove('bob', m.id)).toBe(false);

    const files = new FileRepository(opened.db);
    await files.insert({ id: 'f1', owner: 'alice', name: 'a.xlsx', size: 5_000_000_000, sha256: 's', path: '/p', created_at: 'x' });
    expect((await files.get('alice', 'f1'))?.size).toBe(5_000_000_000);
    expect(await files.get('bob', 'f1')).toBeUndefined();

    const plugins = new PluginRepository(opened.db);
    const manifest = { id: 'p.x', name: 'X', version: '1.0.0' } as never;
    await plugins.put({ id: 'p.x', name: 'X', version: '1.0.0', description: '', enabled: true, manifest, root: '/r', bundled: false, installedAt: 'x', updatedAt: 'x' });
    expect(await plugins.setEnabled('p.x', false, 'y')).toBe(true);
    expect((await new PluginRepository(opened.db).get('p.x'))?.enabled).toBe(false);
    // The list read once is handed out without waiting until the next write, never after it.
    expect(plugins.listNow()).toBeUndefined();
    const listed = await plugins.list();
    expect(plugins.listNow()).toBe(listed);
    expect(listed[0]?.enabled).toBe(false);
    const enabling = plugins.setEnabled('p.x', true, 'z');
    expect(plugins.listNow()).toBeUndefined();
    await enabling;
    expect(plugins.listNow()).toBeUndefined();
    expect((await plugins.list())[0]?.enabled).toBe(true);
    expect(plugins.listNow()?.[0]?.enabled).toBe(true);
    await plugins.remove('p.x');
    expect(plugins.listNow()).toBeUndefined();
    expect(await plugins.list()).toEqual([]);
    expect(plugins.listNow()).toEqual([]);

    const settings = new SettingsStore(opened.db, clock);
    settings.registerSection('locale', { schema: z.enum(['en', 'zh-CN']), defaultValue: 'en' });
    await settings.patch('alice', { locale: 'zh-CN' });
    expect((await new SettingsStore(opened.db, clock).get('alice')).locale).toBe('zh-CN');
  });
});
