import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, type OpenedSqlite, openDatabase, pendingMigrations } from '../../src/storage/database';
import { SqliteTaskStore } from '../../src/tasks/task.store';
import { WebhookRepository } from '../../src/webhooks/webhook.repository';

/**
 * Migration 100 drops two indexes on the host's SQLite file that only start-up and listings read
 * (`webhook_deliveries_open`, `bg_tasks_state`). Started on a database of the previous schema
 * (both indexes present, rows in every state), it applies once, keeps every row, and the reads that
 * used the indexes give the same answers without them.
 */

const NAME = '100-write-path-indexes';
let home: string;
let opened: OpenedSqlite;

function indexes(): string[] {
  return (opened.raw.prepare("select name from sqlite_master where type = 'index' and name not like 'sqlite_autoindex%' order by name").all() as Array<{ name: string }>).map((r) => r.name);
}

/** The schema as it was before migration 100: both indexes, and 100 not yet applied. */
function previousSchema(): void {
  opened.raw.exec(`
    create index webhook_deliveries_open on webhook_deliveries (state) where state in ('CLAIMED', 'QUEUED', 'SUBMITTED');
    create index bg_tasks_state on bg_tasks (state);
  `);
  opened.raw.prepare('delete from schema_migrations where name = ?').run(NAME);
}

function seed(): void {
  const raw = opened.raw;
  raw.prepare("insert into webhook_triggers values ('wh_1', 'default', 'wf1', 'Webhook', '{}', 'full-access', 'ab', 'active', 0, '2026-03-01T00:00:00.000Z', null)").run();
  raw.prepare("insert into webhook_triggers values ('wh_2', 'default', 'wf2', 'Webhook', '{}', 'full-access', 'cd', 'active', 0, '2026-03-01T00:00:00.000Z', null)").run();
  const delivery = raw.prepare('insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, task_id, idempotency_key_supplied) values (?, ?, ?, ?, ?, ?, 1)');
  const states = ['CLAIMED', 'QUEUED', 'SUBMITTED', 'COMPLETED', 'FAILED'];
  for (let i = 0; i < 50; i++) {
    const state = states[i % states.length] as string;
    delivery.run(`whd_${i}`, i % 2 === 0 ? 'wh_1' : 'wh_2', state, '2026-03-01T00:00:00.000Z', 1_772_323_200_000 + i, state === 'CLAIMED' ? null : `t_${i}`);
  }
  const task = raw.prepare(
    "insert into bg_tasks (id, owner, kind, priority, state, workflow_id, workflow_version, inputs, permission_mode, submitted_ms, finished_ms) values (?, 'default', 'workflow-webhook', 'interactive', ?, 'wf1', 1, '{}', 'full-access', ?, ?)",
  );
  const taskStates = ['queued', 'running', 'completed', 'failed'];
  for (let i = 0; i < 40; i++) {
    const state = taskStates[i % taskStates.length] as string;
    task.run(`t_${i}`, state, 1_772_323_200_000 + i, state === 'queued' || state === 'running' ? null : 1_772_323_300_000 + i);
  }
}

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-migration-100-'));
  opened = openDatabase(home);
  await migrate(opened.db);
});

afterEach(async () => {
  await opened.close();
  rmSync(home, { recursive: true, force: true });
});

describe('migration 100: indexes only start-up reads', () => {
  it('a fresh database has neither index', () => {
    expect(indexes()).not.toContain('webhook_deliveries_open');
    expect(indexes()).not.toContain('bg_tasks_state');
    // the indexes the hot paths do read are still there
    expect(indexes()).toEqual(expect.arrayContaining(['webhook_deliveries_trigger', 'webhook_deliveries_open_task', 'webhook_event_claims_age', 'bg_tasks_owner_submitted', 'bg_tasks_finished']));
  });

  it('applies once to a database of the previous schema, keeps every row, and the start-up reads answer as before', async () => {
    previousSchema();
    seed();
    expect(indexes()).toEqual(expect.arrayContaining(['webhook_deliveries_open', 'bg_tasks_state']));
    const repo = new WebhookRepository(opened.db);
    const openBefore = (await repo.open()).map((r) => r.task_id).sort();
    const openOfOne = (await repo.open('wh_1')).map((r) => r.task_id).sort();

    expect(await pendingMigrations(opened.db)).toEqual([NAME]);
    expect(await migrate(opened.db)).toEqual([NAME]);
    expect(await migrate(opened.db)).toEqual([]);
    expect(indexes()).not.toContain('webhook_deliveries_open');
    expect(indexes()).not.toContain('bg_tasks_state');
    expect((opened.raw.prepare('select count(*) as n from webhook_deliveries').get() as { n: number }).n).toBe(50);
    expect((opened.raw.prepare('select count(*) as n from bg_tasks').get() as { n: number }).n).toBe(40);

    // the same open rows, all of them and per trigger
    expect((await repo.open()).map((r) => r.task_id).sort()).toEqual(openBefore);
    expect(openBefore).toHaveLength(20);
    expect((await repo.open('wh_1')).map((r) => r.task_id).sort()).toEqual(openOfOne);
    // claims caught by a stop: the 10 CLAIMED rows, and only them
    const error = { code: 'webhook_interrupted', message: 'stopped' };
    expect(await repo.interruptClaimed('2026-03-01T00:01:00.000Z', 1_772_323_260_000, error)).toBe(10);
    expect((opened.raw.prepare("select count(*) as n from webhook_deliveries where state = 'INTERRUPTED'").get() as { n: number }).n).toBe(10);
    expect(await repo.interruptClaimed('2026-03-01T00:01:00.000Z', 1_772_323_260_000, error)).toBe(0);
    // queued and running tasks are interrupted at start, and only they
    const store = new SqliteTaskStore(opened.db);
    const live = await store.interruptLive(1_772_323_400_000, { code: 'task_interrupted', message: 'stopped' });
    expect(live.map((t) => t.id).sort()).toEqual(
      Array.from({ length: 40 }, (_, i) => i)
        .filter((i) => i % 4 < 2)
        .map((i) => `t_${i}`)
        .sort(),
    );
    expect((opened.raw.prepare("select count(*) as n from bg_tasks where state in ('queued', 'running')").get() as { n: number }).n).toBe(0);
    // an owner's listing filtered by state
    expect((await store.list('default', { state: 'completed', limit: 100 })).map((t) => t.id)).toHaveLength(10);
  });
});
