import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, type OpenedSqlite, openDatabase } from '../../src/storage/database';
import { FairQueue } from '../../src/tasks/fair-queue';
import { type SaveOptions, SqliteTaskStore, type TaskRecord, type TaskStore } from '../../src/tasks/task.store';
import type { BodyOutcome } from '../../src/tasks/task-common';
import { recoverTasks } from '../../src/tasks/task-recovery';
import { TaskRegistry } from '../../src/tasks/task-registry';
import { until } from './helpers';

/**
 * Group commits of the executor on a real SQLite file: a state change is reported only once it is
 * committed, and a freed slot starts the next body without waiting for the previous end's commit
 * (the end and the next start share a commit). A store whose commits can be held shows both.
 */

const homes: string[] = [];
const opened: OpenedSqlite[] = [];
afterAll(async () => {
  for (const o of opened) await o.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

async function database(): Promise<OpenedSqlite> {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-task-commit-'));
  homes.push(home);
  const o = openDatabase(home);
  opened.push(o);
  await migrate(o.db);
  return o;
}

/** The real store, except that saves of a chosen state wait until released. */
class HeldStore implements TaskStore {
  held: Array<() => void> = [];
  holdState?: TaskRecord['state'];
  constructor(private readonly inner: SqliteTaskStore) {}
  save(task: TaskRecord, options?: SaveOptions): Promise<void> {
    if (task.state !== this.holdState) return this.inner.save(task, options);
    const copy = structuredClone(task);
    return new Promise((resolve, reject) => this.held.push(() => void this.inner.save(copy, options).then(resolve, reject)));
  }
  release(): void {
    for (const go of this.held.splice(0)) go();
  }
  get(id: string) {
    return this.inner.get(id);
  }
  list(...a: Parameters<TaskStore['list']>) {
    return this.inner.list(...a);
  }
  interruptLive(...a: Parameters<TaskStore['interruptLive']>) {
    return this.inner.interruptLive(...a);
  }
  prune(keep: number) {
    return this.inner.prune(keep);
  }
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

describe('task executor commits', () => {
  it('reports an end only once it is committed, and starts the next body before that commit', async () => {
    const db = await database();
    const inner = new SqliteTaskStore(db.db);
    const store = new HeldStore(inner);
    const started: string[] = [];
    const finishFirst = gate();
    const registry = new TaskRegistry({
      store,
      policy: new FairQueue({ maxRunning: 1 }),
      clock: { now: () => Date.now() },
      logger: pino({ level: 'silent' }),
      body: {
        prepare: async () => ({ workflowVersion: 1, inputs: {} }),
        run: async (task): Promise<BodyOutcome> => {
          started.push(task.id);
          if (started.length === 1) await finishFirst.opened;
          return { state: 'completed', text: `done ${task.id}` };
        },
      },
    });
    const ended: string[] = [];
    registry.onFinished((t) => ended.push(`${t.id}:${t.state}`));
    const a = await registry.submit({ ownerId: 'o', workflowId: 'w', priority: 'interactive', kind: 'workflow' });
    const b = await registry.submit({ ownerId: 'o', workflowId: 'w', priority: 'interactive', kind: 'workflow' });
    if (!a.ok || !b.ok) throw new Error('refused');
    expect(a.task.state).toBe('running');
    expect(b.task.state).toBe('queued');
    await until(() => started.length === 1, 'the first body');

    store.holdState = 'completed';
    finishFirst.open();
    // the slot is free at once: the second body starts while the first end is not committed
    await until(() => started.length === 2, 'the second body');
    expect(started).toEqual([a.task.id, b.task.id]);
    await until(() => store.held.length >= 1, 'the held end');
    // not committed, so not reported: still running, in the API and in the database
    expect((await registry.get('o', a.task.id))?.state).toBe('running');
    expect((await inner.get(a.task.id))?.state).toBe('running');
    expect(ended).toEqual([]);

    store.holdState = undefined;
    store.release();
    await until(() => ended.length === 2, 'both ends reported');
    expect(ended).toEqual([`${a.task.id}:completed`, `${b.task.id}:completed`]);
    expect((await registry.get('o', a.task.id))?.output.text).toBe(`done ${a.task.id}`);
    expect((await inner.get(a.task.id))?.state).toBe('completed');
    const second = await inner.get(b.task.id);
    expect(second?.state).toBe('completed');
    // times to the microsecond, start after submission
    expect(second?.startedMs).toBeGreaterThanOrEqual(second?.submittedMs ?? Number.POSITIVE_INFINITY);
    await registry.close();
  });

  it('reports neither the start nor the end of a body that ends before its start is committed (a task admitted within a transaction)', async () => {
    const db = await database();
    const inner = new SqliteTaskStore(db.db);
    // the start's and the end's saves wait until released (the creation is written within the caller's transaction)
    const held: Array<() => void> = [];
    let holding = true;
    const store: TaskStore = {
      save: (t, o) => {
        if (!holding) return inner.save(t, o);
        const copy = structuredClone(t);
        return new Promise((resolve, reject) => held.push(() => void inner.save(copy, o).then(resolve, reject)));
      },
      saveWithin: (t) => inner.saveWithin(t),
      get: (id) => inner.get(id),
      list: (o, q) => inner.list(o, q),
      interruptLive: (n, e) => inner.interruptLive(n, e),
      prune: (k) => inner.prune(k),
    };
    let ran = 0;
    const registry = new TaskRegistry({
      store,
      policy: new FairQueue({ maxRunning: 1 }),
      clock: { now: () => Date.now() },
      logger: pino({ level: 'silent' }),
      body: {
        prepare: async () => ({ workflowVersion: 1, inputs: {} }),
        run: async (): Promise<BodyOutcome> => {
          ran += 1;
          return { state: 'completed', text: 'quick' };
        },
      },
    });
    const ended: string[] = [];
    registry.onFinished((t) => ended.push(t.state));
    const prepared = await registry.prepareSubmit({ ownerId: 'o', workflowId: 'w', priority: 'interactive', kind: 'workflow-webhook' });
    const a = db.raw.transaction(() => registry.admitWithin(prepared))();
    if (!a.ok) throw new Error('refused');
    a.committed();
    await until(() => ran === 1 && held.length >= 2, 'the body ran; its start and end held');
    const seen = await registry.get('o', a.task.id);
    expect(seen?.state).toBe('running');
    expect(seen?.output.text).toBe('');
    expect((await inner.get(a.task.id))?.state).toBe('running');
    expect(ended).toEqual([]);
    holding = false;
    for (const go of held.splice(0)) go();
    await until(() => ended.length === 1, 'the end reported');
    expect(ended).toEqual(['completed']);
    expect((await registry.get('o', a.task.id))?.state).toBe('completed');
    expect((await inner.get(a.task.id))?.state).toBe('completed');
    await registry.close();
  });

  it('admits inputs already checked by the caller as they are, and still refuses a bad shared field or a stopping host', async () => {
    const db = await database();
    const inner = new SqliteTaskStore(db.db);
    let prepares = 0;
    const seen: Array<{ version: number; inputs: unknown }> = [];
    const registry = new TaskRegistry({
      store: inner,
      policy: new FairQueue({ maxRunning: 4 }),
      clock: { now: () => Date.now() },
      logger: pino({ level: 'silent' }),
      body: {
        prepare: async () => {
          prepares += 1;
          return { workflowVersion: 1, inputs: {} };
        },
        run: async (task): Promise<BodyOutcome> => {
          seen.push({ version: task.workflowVersion, inputs: task.inputs });
          return { state: 'completed', text: '' };
        },
      },
    });
    const req = { ownerId: 'o', workflowId: 'w', priority: 'interactive' as const, kind: 'workflow-webhook' as const, inputs: { n: 3 } };
    const prepared = registry.prepareChecked(req, 7);
    expect(prepared).toMatchObject({ workflowVersion: 7, inputs: { n: 3 } });
    const a = db.raw.transaction(() => registry.admitWithin(prepared))();
    if (!a.ok) throw new Error('refused');
    a.committed();
    await until(() => seen.length === 1, 'the body ran');
    expect(seen).toEqual([{ version: 7, inputs: { n: 3 } }]);
    expect(prepares).toBe(0);
    expect(() => registry.prepareChecked({ ...req, priority: 'urgent' as never }, 7)).toThrow(expect.objectContaining({ code: 'task_field_invalid' }));
    expect(() => registry.prepareChecked({ ...req, inputs: [1] as never }, 7)).toThrow(expect.objectContaining({ code: 'task_field_invalid' }));
    await registry.close();
    expect(() => registry.prepareChecked(req, 7)).toThrow(expect.objectContaining({ code: 'task_host_stopping' }));
  });

  it('never starts a body whose task could not be committed, and frees its slot', async () => {
    const db = await database();
    const inner = new SqliteTaskStore(db.db);
    const failing: TaskStore = {
      save: (t, o) => (t.id === failId ? Promise.reject(new Error('disk full')) : inner.save(t, o)),
      get: (id) => inner.get(id),
      list: (o, q) => inner.list(o, q),
      interruptLive: (n, e) => inner.interruptLive(n, e),
      prune: (k) => inner.prune(k),
    };
    let failId = '';
    const started: string[] = [];
    const policy = new FairQueue({ maxRunning: 1 });
    const registry = new TaskRegistry({
      store: failing,
      policy,
      clock: { now: () => Date.now() },
      logger: pino({ level: 'silent' }),
      body: {
        prepare: async () => {
          failId = 'pending';
          return { workflowVersion: 1, inputs: {} };
        },
        run: async (task) => {
          started.push(task.id);
          return { state: 'completed', text: '' };
        },
      },
    });
    // the first save of the next task fails: its id is learnt from the store call itself
    const realSave = failing.save;
    failing.save = (t, o) => {
      if (failId === 'pending') failId = t.id;
      return realSave(t, o);
    };
    await expect(registry.submit({ ownerId: 'o', workflowId: 'w', priority: 'interactive', kind: 'workflow' })).rejects.toThrow('disk full');
    expect(started).toEqual([]);
    expect(await inner.get(failId)).toBeUndefined();
    expect(policy.capacity(Date.now()).running).toBe(0);
    await registry.close();
  });
});

describe('end writers (SQLite)', () => {
  const record = (id: string, over: Partial<TaskRecord> = {}): TaskRecord => ({
    id,
    ownerId: 'alice',
    kind: 'workflow-webhook',
    priority: 'interactive',
    state: 'running',
    workflowId: 'wf',
    workflowVersion: 1,
    inputs: {},
    permissionMode: 'full-access',
    submittedMs: 1000,
    startedMs: 1001,
    output: { text: '', truncated: false },
    ...over,
  });

  it('runs inside the commit that records a task’s end: its rows commit with the end; a writer that throws does not stop it', async () => {
    const o = await database();
    o.raw.exec('create table end_notes (task_id text primary key, state text not null)');
    const store = new SqliteTaskStore(o.db);
    const seen: string[] = [];
    store.onEndWithin((t) => {
      seen.push(`${t.id}:${t.state}:${o.raw.inTransaction}`);
      o.raw.prepare('insert into end_notes (task_id, state) values (?, ?)').run(t.id, t.state);
    });
    store.onEndWithin(() => {
      throw new Error('a broken writer');
    });
    await store.save(record('t1'));
    expect(seen).toEqual([]);
    await Promise.all([store.save(record('t1', { state: 'completed', finishedMs: 1005 }), { soon: false }), store.save(record('t2', { state: 'failed', finishedMs: 1006, error: { code: 'x', message: 'y' } }))]);
    expect(seen).toEqual(['t1:completed:true', 't2:failed:true']);
    expect(o.raw.prepare('select task_id, state from end_notes order by task_id').all()).toEqual([
      { task_id: 't1', state: 'completed' },
      { task_id: 't2', state: 'failed' },
    ]);
    expect((await store.get('t1'))?.state).toBe('completed');
    expect((await store.get('t2'))?.error).toEqual({ code: 'x', message: 'y' });
  });

  it('writes nothing of a failed end commit, and skips writers while another transaction holds the connection', async () => {
    const o = await database();
    o.raw.exec('create table end_notes (task_id text primary key)');
    const store = new SqliteTaskStore(o.db);
    const seen: string[] = [];
    store.onEndWithin((t) => {
      seen.push(t.id);
      o.raw.prepare('insert into end_notes (task_id) values (?)').run(t.id);
    });
    // the end row itself is refused (a trigger stands in for a full disk): nothing of the commit stays
    o.raw.exec("create trigger refuse_end before update on bg_tasks when new.id = 't3' and new.state = 'completed' begin select raise(abort, 'disk full'); end");
    await store.save(record('t3'));
    await expect(store.save(record('t3', { state: 'completed', finishedMs: 2000 }))).rejects.toThrow('disk full');
    expect(o.raw.prepare('select count(*) as n from end_notes').get()).toEqual({ n: 0 });
    expect((await store.get('t3'))?.state).toBe('running');
    // a Kysely transaction holds the connection when the end is flushed: it is written after, without the writers
    let saved!: Promise<void>;
    await o.db.transaction().execute(async (trx) => {
      saved = store.save(record('t4', { state: 'completed', finishedMs: 2001 }));
      await new Promise((r) => setImmediate(r));
      await trx.selectFrom('bg_tasks').select('id').execute();
    });
    await saved;
    expect((await store.get('t4'))?.state).toBe('completed');
    expect(seen).toEqual([]);
  });

  it('commits at once the first write someone waits on in a turn and every write a start waits on, with the writes pending then; the turn’s other writes at its end', async () => {
    const o = await database();
    const store = new SqliteTaskStore(o.db);
    const stateOf = (id: string) => (o.raw.prepare('select state from bg_tasks where id = ?').get(id) as { state: string } | undefined)?.state;
    // a write nobody waits on is pending: the turn's first awaited write takes it along
    const lazy = store.save(record('a', { state: 'queued', startedMs: undefined }), { soon: false });
    expect(stateOf('a')).toBeUndefined();
    const first = store.save(record('b'));
    expect(stateOf('a')).toBe('queued');
    expect(stateOf('b')).toBe('running');
    // later in the same turn: shares the commit at the turn's end, unless a body's start waits on it
    const later = store.save(record('c'));
    expect(stateOf('c')).toBeUndefined();
    const starting = store.save(record('s'), { starts: true });
    expect(stateOf('s')).toBe('running');
    expect(stateOf('c')).toBe('running');
    const last = store.save(record('t'));
    expect(stateOf('t')).toBeUndefined();
    await Promise.all([lazy, first, later, starting, last]);
    expect(stateOf('t')).toBe('running');
    // a new turn: its first awaited write is committed at once again; a lone lazy write waits
    await new Promise((r) => setImmediate(r));
    const held = store.save(record('c', { state: 'completed', finishedMs: 1002 }), { soon: false });
    expect(stateOf('c')).toBe('running');
    await held;
    expect(stateOf('c')).toBe('completed');
    await new Promise((r) => setImmediate(r));
    const again = store.save(record('d'));
    expect(stateOf('d')).toBe('running');
    await again;
    // while a transaction holds the connection nothing is written inside it: the write waits for the turn's end
    await new Promise((r) => setImmediate(r));
    let insideTrx!: Promise<void>;
    await o.db.transaction().execute(async (trx) => {
      insideTrx = store.save(record('e'));
      expect(stateOf('e')).toBeUndefined();
      await trx.selectFrom('bg_tasks').select('id').execute();
    });
    await insideTrx;
    expect(stateOf('e')).toBe('running');
  });

  it('starts each task submitted to a free slot in the callback that submitted it, before the turn’s later callbacks', async () => {
    const db = await database();
    let laterCallbackRan = false;
    const seenAtStart: boolean[] = [];
    const registry = new TaskRegistry({
      store: new SqliteTaskStore(db.db),
      policy: new FairQueue({ maxRunning: 2 }),
      clock: { now: () => Date.now() },
      logger: pino({ level: 'silent' }),
      body: {
        prepare: async () => ({ workflowVersion: 1, inputs: {} }),
        run: async (): Promise<BodyOutcome> => {
          seenAtStart.push(laterCallbackRan);
          return { state: 'completed', text: '' };
        },
      },
    });
    // a callback of this turn queued before the submission (another request's work, say)
    await new Promise((r) => setImmediate(r));
    setImmediate(() => {
      laterCallbackRan = true;
    });
    // two submissions in the same turn, both to free slots
    const both = await Promise.all([1, 2].map(() => registry.submit({ ownerId: 'o', workflowId: 'w', priority: 'interactive', kind: 'workflow' })));
    for (const submitted of both) {
      if (!submitted.ok) throw new Error('refused');
      expect(submitted.task.state).toBe('running');
      // committed (persisted before reported) and started without waiting for that callback
      expect(db.raw.prepare('select state from bg_tasks where id = ?').get(submitted.task.id)).toEqual({ state: 'running' });
    }
    await until(() => seenAtStart.length === 2, 'the bodies');
    expect(seenAtStart).toEqual([false, false]);
    await registry.close();
  });
});

describe('restart recovery of running tasks', () => {
  it('a running task whose run was never written goes back to the queue; one whose run began is interrupted', async () => {
    const db = await database();
    const store = new SqliteTaskStore(db.db);
    const task = (id: string, runId?: string): TaskRecord => ({
      id,
      ownerId: 'o',
      kind: 'workflow',
      priority: 'normal',
      state: 'running',
      workflowId: 'w',
      workflowVersion: 1,
      inputs: {},
      permissionMode: 'ask',
      submittedMs: 1000,
      output: { text: '', truncated: false },
      ...(runId ? { runId } : {}),
    });
    // a: its body never wrote a run; b: its run (under its id) was written, the task not told yet;
    // c: its run was recorded on the task
    for (const t of [task('a'), task('b'), task('c', 'run-c')]) await store.save(t);
    const now = new Date().toISOString();
    db.raw.prepare("insert into runs (id, owner, status, config, inputs, origin, sandbox, created_at, updated_at) values ('b', 'o', 'running', '{}', '{}', 'task', 'none', ?, ?)").run(now, now);
    const { interrupted, leftQueued } = await recoverTasks(store, 2000);
    expect(leftQueued.map((t) => [t.id, t.state])).toEqual([['a', 'queued']]);
    expect(interrupted).toBe(2);
    const states = db.raw.prepare('select id, state from bg_tasks order by id').all();
    expect(states).toEqual([
      { id: 'a', state: 'queued' },
      { id: 'b', state: 'interrupted' },
      { id: 'c', state: 'interrupted' },
    ]);
  });
});
