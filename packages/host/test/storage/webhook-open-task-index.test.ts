import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, type OpenedSqlite, openDatabase, pendingMigrations } from '../../src/storage/database';
import { OPEN_ROW, WebhookRepository } from '../../src/webhooks/webhook.repository';
import { openTestDatabase, stopSharedPostgres, testDialects } from '../support/postgres';

/**
 * Migration 110 replaces the audit's full task-id index with one over the open rows only
 * (`webhook_deliveries_open_task`); migration 120 writes its condition as comparisons (an IN list
 * of three constants made SQLite build a temporary B-tree on every write of the table). Started on
 * a database of the previous schema (the full index, rows in every state, one task id on both a
 * finished and an open row), they apply once, keep every row, and the lookups of an open row by
 * task id use the new index and answer as before.
 */

const NAME = '110-webhook-open-task-index';
const CONDITION = '120-webhook-open-task-condition';
let home: string;
let opened: OpenedSqlite;

function indexes(): string[] {
  return (opened.raw.prepare("select name from sqlite_master where type = 'index' and name not like 'sqlite_autoindex%' order by name").all() as Array<{ name: string }>).map((r) => r.name);
}

/** The schema as it was before migration 110: the full index, and 110 not yet applied. */
function previousSchema(): void {
  opened.raw.exec(`
    drop index webhook_deliveries_open_task;
    create index webhook_deliveries_task on webhook_deliveries (task_id) where task_id is not null;
  `);
  opened.raw.prepare('delete from schema_migrations where name in (?, ?)').run(NAME, CONDITION);
}

function opcodes(sql: string, ...params: unknown[]): string[] {
  return (opened.raw.prepare(`explain ${sql}`).all(...params) as Array<{ opcode: string }>).map((r) => r.opcode);
}

const at = '2026-03-01T00:00:00.000Z';
const ms = 1_772_323_200_000;

function seed(): void {
  const raw = opened.raw;
  raw.prepare("insert into webhook_triggers values ('wh_1', 'default', 'wf1', 'Webhook', '{}', 'full-access', 'ab', 'active', 0, ?, null)").run(at);
  const delivery = raw.prepare('insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, task_id, idempotency_key_supplied) values (?, ?, ?, ?, ?, ?, 1)');
  const states = ['CLAIMED', 'QUEUED', 'SUBMITTED', 'COMPLETED', 'FAILED', 'CANCELLED', 'INTERRUPTED'];
  for (let i = 0; i < 70; i++) {
    const state = states[i % states.length] as string;
    delivery.run(`whd_${i}`, 'wh_1', state, at, ms + i, state === 'CLAIMED' ? null : `t_${i}`);
  }
  // the hostile pair: an old finished row and an open one naming the same task
  delivery.run('whd_done', 'wh_1', 'COMPLETED', at, ms, 't_twice');
  delivery.run('whd_open', 'wh_1', 'SUBMITTED', at, ms + 100, 't_twice');
}

function row(id: string): { state: string; duration_ms: number | null } {
  return opened.raw.prepare('select state, duration_ms from webhook_deliveries where id = ?').get(id) as { state: string; duration_ms: number | null };
}

function plan(sql: string): string {
  return (opened.raw.prepare(`explain query plan ${sql}`).all('t_1') as Array<{ detail: string }>).map((r) => r.detail).join('; ');
}

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-migration-110-'));
  opened = openDatabase(home);
  await migrate(opened.db);
});

afterEach(async () => {
  await opened.close();
  rmSync(home, { recursive: true, force: true });
});

describe('migration 110: the task-id index over open audit rows only', () => {
  it('a fresh database has the partial index and not the full one', () => {
    expect(indexes()).toContain('webhook_deliveries_open_task');
    expect(indexes()).not.toContain('webhook_deliveries_task');
    const sql = (opened.raw.prepare("select sql from sqlite_master where name = 'webhook_deliveries_open_task'").get() as { sql: string }).sql;
    expect(sql).toContain(OPEN_ROW);
  });

  it('neither the index nor its readers build a temporary B-tree for the open states', () => {
    // the audit's insert evaluates the index's condition for the new row; a task's end and a lookup evaluate the readers' condition
    expect(opcodes("insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, task_id, idempotency_key_supplied) values ('whd_x', 'wh_1', 'SUBMITTED', 'x', 1, 't', 1)")).not.toContain('OpenEphemeral');
    expect(opcodes(`update webhook_deliveries set state = ?, completed_at = ?, duration_ms = ?, error_code = ?, error_message = ? where seq = ? and ${OPEN_ROW}`, 'COMPLETED', 'x', 1, null, null, 1)).not.toContain('OpenEphemeral');
    expect(opcodes(`select id, accepted_ms from webhook_deliveries where task_id = ? and ${OPEN_ROW}`, 't')).not.toContain('OpenEphemeral');
    expect(opcodes('delete from webhook_deliveries where trigger_id = ? and seq <= 5', 'wh_1')).not.toContain('OpenEphemeral');
    // what the IN list of three constants did
    expect(opcodes("select id from webhook_deliveries where seq = ? and state in ('CLAIMED', 'QUEUED', 'SUBMITTED')", 1)).toContain('OpenEphemeral');
  });

  it('a lookup of an open row by task id uses the partial index; one without an open-state condition does not', () => {
    expect(plan(`select id, accepted_ms from webhook_deliveries where task_id = ? and ${OPEN_ROW}`)).toContain('USING INDEX webhook_deliveries_open_task');
    expect(plan(`update webhook_deliveries set state = 'SUBMITTED' where task_id = ? and ${OPEN_ROW} and state = 'QUEUED'`)).toContain('USING INDEX webhook_deliveries_open_task');
    // one open state implies the index's condition (SQLite proves a term implies one of its comparisons)
    expect(plan("select id from webhook_deliveries where task_id = ? and state = 'QUEUED'")).toContain('USING INDEX webhook_deliveries_open_task');
    // without a condition on the state, rows outside the index may match: it is not used
    expect(plan('select id from webhook_deliveries where task_id = ?')).not.toContain('webhook_deliveries_open_task');
    expect(plan("select id from webhook_deliveries where task_id = ? and state = 'COMPLETED'")).not.toContain('webhook_deliveries_open_task');
  });

  it('applies once to a database of the previous schema, keeps every row, and a task end or start finds its open row as before', async () => {
    previousSchema();
    seed();
    expect(indexes()).toContain('webhook_deliveries_task');
    expect(await pendingMigrations(opened.db)).toEqual([NAME, CONDITION]);
    expect(await migrate(opened.db)).toEqual([NAME, CONDITION]);
    expect(await migrate(opened.db)).toEqual([]);
    expect(indexes()).toContain('webhook_deliveries_open_task');
    expect(indexes()).not.toContain('webhook_deliveries_task');
    expect(plan(`select id from webhook_deliveries where task_id = ? and ${OPEN_ROW}`)).toContain('USING INDEX webhook_deliveries_open_task');
    expect((opened.raw.prepare('select count(*) as n from webhook_deliveries').get() as { n: number }).n).toBe(72);
    expect((opened.raw.prepare('select count(*) as n from webhook_deliveries indexed by webhook_deliveries_open_task where ' + OPEN_ROW).get() as { n: number }).n).toBe(
      (opened.raw.prepare(`select count(*) as n from webhook_deliveries where ${OPEN_ROW}`).get() as { n: number }).n,
    );

    const repo = new WebhookRepository(opened.db);
    // a task's end: the open row of that task, not the finished one naming the same task
    expect(await repo.finished('t_twice', 'COMPLETED', at, ms + 150)).toBe(1);
    expect(row('whd_open')).toEqual({ state: 'COMPLETED', duration_ms: 50 });
    expect(row('whd_done')).toEqual({ state: 'COMPLETED', duration_ms: null });
    // once ended, the row is no longer open: a second end changes nothing
    expect(await repo.finished('t_twice', 'FAILED', at, ms + 200)).toBe(0);
    expect(row('whd_open').state).toBe('COMPLETED');
    // a finished row is never reopened or ended again
    expect(await repo.finished('t_3', 'FAILED', at, ms + 200)).toBe(0);
    expect(row('whd_3').state).toBe('COMPLETED');
    // a queued task's start (the asynchronous path) moves its QUEUED row only
    await repo.started('t_1');
    expect(row('whd_1').state).toBe('SUBMITTED');
    await repo.started('t_2');
    expect(row('whd_2').state).toBe('SUBMITTED');
    await repo.started('t_4');
    expect(row('whd_4').state).toBe('FAILED');
    // an unknown task changes nothing
    expect(await repo.finished('t_unknown', 'COMPLETED', at, ms)).toBe(0);
  });
});

describe('migration 120: the open-row index with its condition as comparisons', () => {
  it('applies once to a database that has the index of migration 110 (an IN list) and keeps the same rows indexed', async () => {
    opened.raw.exec(`
      drop index webhook_deliveries_open_task;
      create index webhook_deliveries_open_task on webhook_deliveries (task_id) where state in ('CLAIMED', 'QUEUED', 'SUBMITTED');
    `);
    opened.raw.prepare('delete from schema_migrations where name = ?').run(CONDITION);
    seed();
    const openRows = () => opened.raw.prepare(`select id from webhook_deliveries indexed by webhook_deliveries_open_task where ${OPEN_ROW} order by id`).all();
    const before = (opened.raw.prepare("select id from webhook_deliveries where state in ('CLAIMED', 'QUEUED', 'SUBMITTED') order by id").all() as Array<{ id: string }>).map((r) => r.id);

    expect(await migrate(opened.db)).toEqual([CONDITION]);
    expect(await migrate(opened.db)).toEqual([]);
    const sql = (opened.raw.prepare("select sql from sqlite_master where name = 'webhook_deliveries_open_task'").get() as { sql: string }).sql;
    expect(sql).toContain(OPEN_ROW);
    expect(plan(`select id from webhook_deliveries where task_id = ? and ${OPEN_ROW}`)).toContain('USING INDEX webhook_deliveries_open_task');
    // the index holds exactly the open rows, as before
    expect((openRows() as Array<{ id: string }>).map((r) => r.id)).toEqual(before);
    expect(before).toHaveLength(31);
    expect(await new WebhookRepository(opened.db).finished('t_twice', 'COMPLETED', at, ms + 150)).toBe(1);
    expect(row('whd_open').state).toBe('COMPLETED');
    expect(row('whd_done')).toEqual({ state: 'COMPLETED', duration_ms: null });
  });
});

describe.each(testDialects())('the open-row lookups on %s (the asynchronous path)', (dialect) => {
  afterAll(async () => {
    await stopSharedPostgres();
  });

  it('a task end finds the open row of its task and no other; a start moves only a QUEUED row', async () => {
    const db = await openTestDatabase(dialect, '');
    try {
      await sql`insert into webhook_triggers values ('wh_1', 'default', 'wf1', 'Webhook', '{}', 'full-access', 'ab', 'active', 0, ${at}, null)`.execute(db.db);
      const rows: Array<[string, string, string | null]> = [
        ['whd_done', 'COMPLETED', 't_twice'],
        ['whd_open', 'SUBMITTED', 't_twice'],
        ['whd_q', 'QUEUED', 't_q'],
        ['whd_f', 'FAILED', 't_f'],
        ['whd_c', 'CLAIMED', null],
      ];
      for (const [id, state, task] of rows) {
        await sql`insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, task_id, idempotency_key_supplied) values (${id}, 'wh_1', ${state}, ${at}, ${ms}, ${task}, 1)`.execute(db.db);
      }
      // on PostgreSQL every call takes the asynchronous path; on SQLite the synchronous one
      const repo = new WebhookRepository(db.db);
      const state = async (id: string) => ((await sql<{ state: string }>`select state from webhook_deliveries where id = ${id}`.execute(db.db)).rows[0] as { state: string }).state;
      expect(await repo.finished('t_twice', 'COMPLETED', at, ms + 10)).toBe(1);
      expect(await state('whd_open')).toBe('COMPLETED');
      expect(await repo.finished('t_twice', 'FAILED', at, ms + 20)).toBe(0);
      expect(await repo.finished('t_f', 'COMPLETED', at, ms + 20)).toBe(0);
      expect(await state('whd_f')).toBe('FAILED');
      await repo.started('t_q');
      expect(await state('whd_q')).toBe('SUBMITTED');
      await repo.started('t_f');
      expect(await state('whd_f')).toBe('FAILED');
      expect(await state('whd_c')).toBe('CLAIMED');
    } finally {
      await db.close();
    }
  });
});
