import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunStatus } from '@fengyu/protocol';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ListQuery, RunRepository } from '../../src/agent/run.repository';
import { migrate, type OpenedSqlite, openDatabase, pendingMigrations } from '../../src/storage/database';

/**
 * Migrations 130 and 140, the secondary indexes of `runs`. Migration 130 makes the secondary indexes of `runs` cheaper for every run's commits to write:
 * `runs_status` becomes `runs_live` (live statuses only) and `runs_owner_created` ascending.
 * Started on a database of the previous schema (runs in every status, two owners, equal creation
 * times), it applies once, keeps every row, the reads give the same answers, and the reads that
 * used an index still use one (the live runs through `runs_live`, an owner's listing through
 * `runs_owner_created` without sorting).
 */

const NAME = '130-run-write-indexes';
const STATUSES: RunStatus[] = ['planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval', 'completed', 'failed', 'cancelled', 'interrupted'];
const LIVE = new Set<RunStatus>(['planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval']);

let home: string;
let opened: OpenedSqlite;
/** The statements the repository ran (a second Kysely on the same connection, logging them). */
let queries: Array<{ sql: string; parameters: readonly unknown[] }>;
let repo: RunRepository;

function indexes(): string[] {
  return (opened.raw.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'runs' and name not like 'sqlite_autoindex%' order by name").all() as Array<{ name: string }>).map((r) => r.name);
}

/** The schema as it was before migration 130, and 130 not yet applied. */
function previousSchema(): void {
  opened.raw.exec(`
    drop index runs_live;
    drop index runs_owner_created;
    create index runs_owner_created on runs (owner, created_at desc, id desc);
    create index runs_status on runs (status);
  `);
  opened.raw.prepare('delete from schema_migrations where name = ?').run(NAME);
}

function seed(): void {
  const insert = opened.raw.prepare(
    "insert into runs (id, owner, goal, status, config, inputs, origin, sandbox, created_at, updated_at) values (?, ?, null, ?, '{}', '{}', 'api', '{}', ?, ?)",
  );
  for (let i = 0; i < 96; i++) {
    // three runs per instant: the listing orders the ties by id
    const at = new Date(Date.UTC(2026, 2, 1) + Math.floor(i / 3) * 1000).toISOString();
    insert.run(`run_${String(i).padStart(3, '0')}`, i % 5 === 0 ? 'other' : 'default', STATUSES[i % STATUSES.length], at, at);
  }
}

/** Every page of an owner's listing (optionally filtered by status), as ids. */
async function pages(owner: string, status?: RunStatus[]): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: ListQuery['cursor'];
  for (;;) {
    const rows = await repo.list({ owner, ...(status ? { status } : {}), limit: 7, ...(cursor ? { cursor } : {}) });
    if (rows.length === 0) return out;
    out.push(rows.map((r) => r.id));
    const last = rows[rows.length - 1] as (typeof rows)[number];
    cursor = { createdAt: last.created_at, id: last.id };
  }
}

async function answers() {
  return {
    live: (await repo.listNonTerminal()).map((r) => r.id).sort(),
    all: await pages('default'),
    other: await pages('other'),
    failed: await pages('default', ['failed']),
    running: await pages('default', ['running', 'awaiting_step_approval']),
  };
}

/** SQLite's plan of the last statement the repository ran. */
function lastPlan(): string {
  const q = queries[queries.length - 1] as (typeof queries)[number];
  return (opened.raw.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
}

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-migration-130-'));
  opened = openDatabase(home);
  await migrate(opened.db);
  queries = [];
  const logged = new Kysely({
    dialect: new SqliteDialect({ database: opened.raw }),
    log: (e) => {
      if (e.level === 'query') queries.push({ sql: e.query.sql, parameters: e.query.parameters });
    },
  });
  repo = new RunRepository(logged);
});

afterEach(async () => {
  await opened.close();
  rmSync(home, { recursive: true, force: true });
});

describe('migration 130: the indexes of runs that every run writes', () => {
  it('a fresh database has runs_live (live statuses only) and runs_owner_created ascending, not runs_status', () => {
    expect(indexes()).toEqual(['runs_live', 'runs_owner_created', 'runs_owner_unsettled', 'runs_owner_workflow']);
    const partial = opened.raw.prepare('pragma index_list(runs)').all() as Array<{ name: string; partial: number }>;
    expect(partial.find((i) => i.name === 'runs_live')?.partial).toBe(1);
    // migration 220: a run waiting for input is live too
    expect((opened.raw.prepare("select sql from sqlite_master where name = 'runs_live'").get() as { sql: string }).sql).toContain("status = 'awaiting_input'");
    const columns = (opened.raw.prepare('pragma index_xinfo(runs_owner_created)').all() as Array<{ name: string | null; desc: number; key: number }>).filter((c) => c.key === 1);
    expect(columns.map((c) => [c.name, c.desc])).toEqual([
      ['owner', 0],
      ['created_at', 0],
      ['id', 0],
    ]);
  });

  it('applies once to a database of the previous schema, keeps every row, and the reads answer as before', async () => {
    previousSchema();
    seed();
    expect(indexes()).toEqual(['runs_owner_created', 'runs_owner_unsettled', 'runs_owner_workflow', 'runs_status']);
    const before = await answers();
    const rowsBefore = opened.raw.prepare('select * from runs order by id').all();

    expect(await pendingMigrations(opened.db)).toEqual([NAME]);
    expect(await migrate(opened.db)).toEqual([NAME]);
    expect(await migrate(opened.db)).toEqual([]);
    expect(indexes()).toEqual(['runs_live', 'runs_owner_created', 'runs_owner_unsettled', 'runs_owner_workflow']);
    expect(opened.raw.prepare('select * from runs order by id').all()).toEqual(rowsBefore);

    const after = await answers();
    expect(after).toEqual(before);
    // the live runs: the four live statuses of 96 runs, and only them
    expect(after.live).toHaveLength(48);
    expect(after.live.every((id) => LIVE.has(STATUSES[Number(id.slice(4)) % STATUSES.length] as RunStatus))).toBe(true);
    // newest first, ties by id descending, over every page
    const listed = after.all.flat();
    expect(listed).toHaveLength(96 - 20);
    expect(listed).toEqual([...listed].sort().reverse());
    expect(after.failed.flat()).toHaveLength(12 - 3);
  });

  it('reads the live runs through runs_live, and an owner\'s listing through runs_owner_created without sorting', async () => {
    seed();
    await repo.listNonTerminal();
    expect(lastPlan()).toContain('USING INDEX runs_live');
    for (const status of [undefined, ['completed', 'failed'] as RunStatus[]]) {
      await repo.list({ owner: 'default', ...(status ? { status } : {}), limit: 7, cursor: { createdAt: '2026-03-01T00:00:10.000Z', id: 'run_031' } });
      expect(lastPlan()).toContain('USING INDEX runs_owner_created');
      expect(lastPlan()).not.toContain('TEMP B-TREE');
    }
  });

  it('a run that ends leaves runs_live; one resumed enters it again', () => {
    seed();
    const live = () => (opened.raw.prepare("select count(*) as n from runs indexed by runs_live where (status = 'planning' or status = 'awaiting_plan_approval' or status = 'running' or status = 'awaiting_step_approval')").get() as { n: number }).n;
    expect(live()).toBe(48);
    opened.raw.prepare("update runs set status = 'completed' where id = 'run_002'").run();
    expect(live()).toBe(47);
    opened.raw.prepare("update runs set status = 'running' where id = 'run_005'").run();
    expect(live()).toBe(48);
    expect(opened.raw.prepare('pragma integrity_check').get()).toEqual({ integrity_check: 'ok' });
  });
});

/** Every run of `owner` in `statuses`, newest first and ties by id descending: the listing's order, computed apart. */
function expected(owner: string, statuses: RunStatus[]): string[] {
  const rows = opened.raw.prepare(`select id, created_at from runs where owner = ? and status in (${statuses.map(() => '?').join(', ')})`).all(owner, ...statuses) as Array<{ id: string; created_at: string }>;
  return rows.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1)).map((r) => r.id);
}

const FILTERS: RunStatus[][] = [['failed'], ['running', 'awaiting_step_approval'], ['failed', 'cancelled', 'interrupted'], ['interrupted', 'planning', 'failed', 'running'], ['completed'], ['completed', 'failed']];

describe('migration 140: an owner\'s listing filtered by statuses other than completed', () => {
  it('a fresh database has runs_owner_unsettled, partial: completed runs never enter it', () => {
    seed();
    const partial = opened.raw.prepare('pragma index_list(runs)').all() as Array<{ name: string; partial: number }>;
    expect(partial.find((i) => i.name === 'runs_owner_unsettled')?.partial).toBe(1);
    const entries = () => (opened.raw.prepare("select count(*) as n from runs indexed by runs_owner_unsettled where status <> 'completed'").get() as { n: number }).n;
    expect(entries()).toBe(96 - 12);
    opened.raw.prepare("update runs set status = 'completed' where id = 'run_002'").run();
    expect(entries()).toBe(96 - 13);
    opened.raw.prepare("update runs set status = 'running' where id = 'run_004'").run();
    expect(entries()).toBe(96 - 12);
    expect(opened.raw.prepare('pragma integrity_check').get()).toEqual({ integrity_check: 'ok' });
  });

  it('applies once to a database without it; every filtered listing answers the same, in order, over every page', async () => {
    seed();
    opened.raw.exec('drop index runs_owner_unsettled');
    opened.raw.prepare('delete from schema_migrations where name = ?').run('140-run-unsettled-index');
    const before = await Promise.all(FILTERS.map((f) => pages('default', f)));
    expect(await migrate(opened.db)).toEqual(['140-run-unsettled-index']);
    expect(await migrate(opened.db)).toEqual([]);
    const after = await Promise.all(FILTERS.map((f) => pages('default', f)));
    expect(after).toEqual(before);
    // three runs per instant: the merge of several statuses' lists orders ties by id, as one query does
    FILTERS.forEach((f, i) => expect(after[i]?.flat()).toEqual(expected('default', f)));
    expect(after[3]?.flat().length).toBeGreaterThan(7);
  });

  it('reads a filter without completed through runs_owner_unsettled, each status an ordered range, and a filter with it through runs_owner_created', async () => {
    seed();
    const cursor = { createdAt: '2026-03-01T00:00:25.000Z', id: 'run_076' };
    for (const status of [['failed'], ['failed', 'cancelled', 'interrupted']] as RunStatus[][]) {
      const from = queries.length;
      await repo.list({ owner: 'default', status, limit: 7, cursor });
      const ran = queries.slice(from);
      expect(ran).toHaveLength(status.length);
      for (const q of ran) {
        const plan = (opened.raw.prepare(`explain query plan ${q.sql}`).all(...q.parameters) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
        expect(plan).toContain('USING INDEX runs_owner_unsettled (owner=? AND status=?');
        expect(plan).not.toContain('TEMP B-TREE');
      }
    }
    await repo.list({ owner: 'default', status: ['completed', 'failed'], limit: 7, cursor });
    expect(lastPlan()).toContain('USING INDEX runs_owner_created');
  });
});

describe("migration 310: one workflow's runs of an owner", () => {
  /** Every fourth run without a workflow, the rest spread over three workflows. */
  function withWorkflows(): void {
    seed();
    opened.raw.exec("update runs set workflow_id = case cast(substr(id, 5) as integer) % 4 when 0 then null when 1 then 'wf_a' when 2 then 'wf_b' else 'wf_c' end");
  }
  const computed = (owner: string, workflowId: string) =>
    (opened.raw.prepare('select id from runs where owner = ? and workflow_id = ? order by created_at desc, id desc').all(owner, workflowId) as Array<{ id: string }>).map((r) => r.id);

  it('a fresh database has runs_owner_workflow, partial: runs without a workflow never enter it', () => {
    withWorkflows();
    const partial = opened.raw.prepare('pragma index_list(runs)').all() as Array<{ name: string; partial: number }>;
    expect(partial.find((i) => i.name === 'runs_owner_workflow')?.partial).toBe(1);
    const entries = (opened.raw.prepare('select count(*) as n from runs indexed by runs_owner_workflow where workflow_id is not null').get() as { n: number }).n;
    expect(entries).toBe(96 - 24);
  });

  it("reads a workflow's listing through runs_owner_workflow without sorting, and answers like the listing computed apart, over every page", async () => {
    withWorkflows();
    await repo.list({ owner: 'default', workflowId: 'wf_b', limit: 7, cursor: { createdAt: '2026-03-01T00:00:25.000Z', id: 'run_076' } });
    expect(lastPlan()).toContain('USING INDEX runs_owner_workflow (owner=? AND workflow_id=?');
    expect(lastPlan()).not.toContain('TEMP B-TREE');
    for (const owner of ['default', 'other']) {
      for (const workflowId of ['wf_a', 'wf_b', 'wf_c', 'wf_none']) {
        const paged: string[] = [];
        let cursor: ListQuery['cursor'];
        for (;;) {
          const rows = await repo.list({ owner, workflowId, limit: 5, ...(cursor ? { cursor } : {}) });
          if (rows.length === 0) break;
          paged.push(...rows.map((r) => r.id));
          const last = rows[rows.length - 1] as (typeof rows)[number];
          cursor = { createdAt: last.created_at, id: last.id };
        }
        expect(paged, `${owner} ${workflowId}`).toEqual(computed(owner, workflowId));
      }
    }
    expect(computed('default', 'wf_a').length).toBeGreaterThan(5);
    // with a status filter too, only that workflow's runs in those statuses
    const failed = await repo.list({ owner: 'default', workflowId: 'wf_a', status: ['failed', 'cancelled'], limit: 50 });
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((r) => r.workflow_id === 'wf_a' && (r.status === 'failed' || r.status === 'cancelled'))).toBe(true);
  });
});
