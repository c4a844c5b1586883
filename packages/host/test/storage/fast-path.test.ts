import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RunRow, RunRepository, type StepRow } from '../../src/agent/run.repository';
import { EventLog, payloadJson, presetJson, type RawWrite } from '../../src/events/event-log';
import { frame, storedFrame } from '../../src/events/sse';
import { LoopTurn } from '../../src/events/turn';
import { migrate, type OpenedSqlite, openDatabase, preparedOf } from '../../src/storage/database';

/**
 * The SQLite hot path (prepared statements in one synchronous transaction) writes exactly what the
 * Kysely path writes, stands aside while a Kysely transaction is open, and leaves nothing behind
 * when any part of the transaction fails.
 */

const clock = { now: () => Date.parse('2026-03-01T00:00:00Z') };
const at = '2026-03-01T00:00:00.000Z';

function runRow(id: string): RunRow {
  return { id, owner: 'alice', goal: 'g', status: 'running', plan: null, config: '{}', inputs: '{}', files: null, gate: null, summary: null, error: null, result: null, parent_run_id: null, origin: 'api', sandbox: 'none', workflow_id: null, workflow_version: null, last_seq: 0, created_at: at, updated_at: at, finished_at: null };
}

function stepRow(runId: string, over: Partial<StepRow> = {}): StepRow {
  return { run_id: runId, step_id: 's1', status: 'running', attempts: 1, result: null, error: null, started_at: at, finished_at: null, duration_ms: null, fingerprint: 'f', reused: 0, ...over };
}

let home: string;
let opened: OpenedSqlite;

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-fast-'));
  opened = openDatabase(home);
  await migrate(opened.db);
});

afterEach(async () => {
  vi.useRealTimers();
  await opened.close();
  rmSync(home, { recursive: true, force: true });
});

async function snapshot(runId: string) {
  const db = opened.db;
  return {
    events: (await db.selectFrom('run_events').select(['seq', 'type', 'data', 'ts']).where('run_id', '=', runId).orderBy('seq').execute()) as unknown[],
    run: (await db.selectFrom('runs').select(['status', 'summary', 'result', 'updated_at']).where('id', '=', runId).executeTakeFirst()) as unknown,
    steps: (await db.selectFrom('step_executions').selectAll().where('run_id', '=', runId).execute()).map((r) => ({ ...r, run_id: 'x' })) as unknown[],
  };
}

describe('SQLite fast path of the event log and run rows', () => {
  it('writes the same events, run row and step row as the Kysely path', async () => {
    const log = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    for (const id of ['slow', 'fast']) await log.commit(id, [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow(id), trx));

    await log.commit('slow', [{ type: 'step_start', stepId: 's1', index: 1, attempt: 1 } as never], async (trx) => {
      await repo.update('slow', { status: 'running', updated_at: 'later' }, trx);
      await repo.upsertStep(stepRow('slow'), trx);
    });
    await log.commit('slow', [{ type: 'step_complete', stepId: 's1', index: 1, status: 'done', result: { n: 1 }, attempts: 1, durationMs: 3 } as never, { type: 'complete', result: 1, summary: 'ok' } as never], async (trx) => {
      await repo.update('slow', { status: 'completed', summary: 'ok', result: '1', updated_at: 'end' }, trx);
      await repo.upsertStep(stepRow('slow', { status: 'done', result: '{"n":1}', started_at: null, finished_at: 'end', duration_ms: 3 }), trx);
    });

    const published: number[] = [];
    log.subscribe('fast', (e) => published.push(e.seq));
    const first = log.commitFast('fast', [{ type: 'step_start', stepId: 's1', index: 1, attempt: 1 } as never], (raw) => {
      repo.updateRaw(raw, 'fast', { status: 'running', updated_at: 'later' });
      repo.upsertStepRaw(raw, stepRow('fast'));
    });
    expect(first?.map((e) => e.seq)).toEqual([2]);
    log.commitFast('fast', [{ type: 'step_complete', stepId: 's1', index: 1, status: 'done', result: { n: 1 }, attempts: 1, durationMs: 3 } as never, { type: 'complete', result: 1, summary: 'ok' } as never], (raw) => {
      repo.updateRaw(raw, 'fast', { status: 'completed', summary: 'ok', result: '1', updated_at: 'end' });
      repo.upsertStepRaw(raw, stepRow('fast', { status: 'done', result: '{"n":1}', started_at: null, finished_at: 'end', duration_ms: 3 }));
    });
    expect(published).toEqual([2, 3, 4]);
    expect(await snapshot('fast')).toEqual(await snapshot('slow'));
    // the same keys in another order, and a shape written before: the same row
    const row = (id: string) => ({ ...(opened.raw.prepare('select * from runs where id = ?').get(id) as object), id: 'x' });
    for (const id of ['fast', 'slow']) opened.raw.transaction(() => repo.updateRaw(opened.raw, id, id === 'fast' ? { summary: 'again', status: 'failed', error: 'e' } : { error: 'e', status: 'failed', summary: 'again' }))();
    expect(row('fast')).toEqual(row('slow'));
    expect(row('fast')).toMatchObject({ summary: 'again', status: 'failed', error: 'e', result: '1' });
    for (const id of ['fast', 'slow']) opened.raw.transaction(() => repo.updateRaw(opened.raw, id, { status: 'completed', summary: 'ok', result: '2', updated_at: 'end2' }))();
    expect(row('fast')).toEqual(row('slow'));
    expect(row('fast')).toMatchObject({ summary: 'ok', status: 'completed', error: 'e', result: '2', updated_at: 'end2' });
  });

  it("writes a new run's row as the Kysely insert does, every column (null, numbers, text), with and without an executing host", async () => {
    // every column a value of its own: a value bound to another column shows
    const full: RunRow = { ...runRow('x'), goal: null, status: 'completed', plan: '{"steps":[]}', config: '{"c":1}', inputs: '{"i":2}', files: '[]', gate: '{"id":"g"}', summary: 's', error: 'e', result: '{"n":1}', parent_run_id: 'p', origin: 'fork', sandbox: '{"mode":"x"}', workflow_id: 'w', workflow_version: 3, last_seq: 7, created_at: '2026-01-01T00:00:00.001Z', updated_at: '2026-01-01T00:00:00.002Z', finished_at: 'f' };
    const read = (id: string) => opened.raw.prepare('select * from runs where id = ?').get(id) as Record<string, unknown>;
    for (const [repo, hostId] of [[new RunRepository(opened.db), null], [new RunRepository(opened.db, 'host-1'), 'host-1']] as const) {
      for (const row of [runRow(`plain-${hostId}`), { ...full, id: `full-${hostId}` }]) {
        await repo.insert({ ...row, id: `kysely-${row.id}` });
        opened.raw.transaction(() => repo.insertRaw(opened.raw, { ...row, id: `raw-${row.id}` }))();
        const raw = read(`raw-${row.id}`);
        expect({ ...raw, id: row.id }).toEqual({ ...read(`kysely-${row.id}`), id: row.id });
        expect(raw.host_id).toBe(hostId);
        // input_answer: written only by an input's answer, never by the insert (null in both)
        expect(Object.keys(raw).sort()).toEqual([...Object.keys(row), 'host_id', 'input_answer'].sort());
      }
    }
  });

  it('stands aside while a Kysely transaction is open on the connection', async () => {
    const log = new EventLog(opened.db, clock);
    await new RunRepository(opened.db).insert(runRow('r'));
    await opened.db.transaction().execute(async () => {
      expect(log.commitFast('r', [{ type: 'audit', kind: 'x' } as never])).toBeUndefined();
      expect(preparedOf(opened.db, 'select 1')).toBeUndefined();
    });
    expect(log.commitFast('r', [{ type: 'audit', kind: 'x' } as never])?.length).toBe(1);
    expect(preparedOf(opened.db, 'select 1')).toBeDefined();
  });

  it('a failing projection leaves neither the events nor the row change, and the sequence is not consumed', async () => {
    const log = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    await log.commit('r', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow('r'), trx));
    expect(() =>
      log.commitFast('r', [{ type: 'audit', kind: 'x' } as never], (raw) => {
        repo.updateRaw(raw, 'r', { status: 'completed' });
        repo.upsertStepRaw(raw, stepRow('missing-run'));
      }),
    ).toThrow();
    expect(() => repo.updateRaw(opened.raw, 'r', { 'status = 1; --': 'x' } as never)).toThrow(/not a column/);
    // the keys of a shape already written, joined differently, are checked again
    repo.updateRaw(opened.raw, 'r', { summary: 'a', error: 'b' });
    expect(() => repo.updateRaw(opened.raw, 'r', { 'summary,error': 'x' } as never)).toThrow(/not a column/);
    expect(() => repo.updateRaw(opened.raw, 'r', { summary: 'c', 'error,summary': 'x' } as never)).toThrow(/not a column/);
    const snap = await snapshot('r');
    expect((snap.run as { status: string }).status).toBe('running');
    expect(snap.events).toHaveLength(1);
    expect(log.commitFast('r', [{ type: 'audit', kind: 'y' } as never])?.[0]?.seq).toBe(2);
  });

  it('groups the commits of one turn (several runs) into one transaction, in order; a failing one fails only its caller', async () => {
    const log = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    for (const id of ['a', 'b']) await log.commit(id, [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow(id), trx));
    const seen: string[] = [];
    for (const id of ['a', 'b']) log.subscribe(id, (e) => seen.push(`${e.runId}${e.seq}:${e.type}`));
    let commits = 0;
    const before = opened.raw.prepare('select total_changes() as n').get() as { n: number };
    const started = [
      log.commitGrouped('a', [{ type: 'audit', kind: 'x' } as never], (raw) => repo.upsertStepRaw(raw, stepRow('a')), async (trx) => repo.upsertStep(stepRow('a'), trx)),
      log.commitGrouped('b', [{ type: 'audit', kind: 'y' } as never], undefined),
      log.commitGrouped('a', [{ type: 'step_complete', stepId: 's1', index: 1, status: 'done', result: 1, attempts: 1, durationMs: 1 } as never], (raw) => {
        commits += 1;
        repo.upsertStepRaw(raw, stepRow('a', { status: 'done' }));
      }, async (trx) => repo.upsertStep(stepRow('a', { status: 'done' }), trx)),
      log.commitGrouped('a', [{ type: 'audit', kind: 'bad' } as never], (raw) => repo.upsertStepRaw(raw, stepRow('missing-run')), async (trx) => repo.upsertStep(stepRow('missing-run'), trx)),
    ];
    // nothing is written (or published) before the end of the turn
    expect((opened.raw.prepare('select total_changes() as n').get() as { n: number }).n).toBe(before.n);
    expect(seen).toEqual([]);
    const settled = await Promise.allSettled(started);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(commits).toBe(2); // the group rolled back once, then each was written alone
    expect(seen).toEqual(['a2:audit', 'b2:audit', 'a3:step_complete']);
    const a = await snapshot('a');
    expect(a.events.map((e) => (e as { seq: number }).seq)).toEqual([1, 2, 3]);
    expect((a.steps[0] as { status: string }).status).toBe('done');
  });

  it("a run's row and step rows changed in one group are written once each, with their last values", async () => {
    const log = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    const writes: string[] = [];
    // each change written through a wrapper that records it; a fold is the wrapped changes' own
    const wrapped = new WeakMap<RawWrite, RawWrite>();
    const counted = (w: RawWrite, label: string): RawWrite => {
      const fold = w.fold;
      const c: RawWrite = (raw) => {
        writes.push(label);
        w(raw);
      };
      if (w.creates) c.creates = true;
      if (fold) c.fold = (later) => {
        const f = fold(wrapped.get(later) ?? later);
        return f && counted(f, `${label}+`);
      };
      wrapped.set(c, w);
      return c;
    };
    const complete = { type: 'step_complete', stepId: 's1', index: 1, status: 'done', result: 1, attempts: 1, durationMs: 1 } as never;
    await Promise.all([
      log.commitGrouped('a', [{ type: 'run_created', status: 'running', origin: 'api' } as never], counted(repo.rawWrite({ runId: 'a', insert: runRow('a') }), 'create a')),
      log.commitGrouped('b', [{ type: 'run_created', status: 'running', origin: 'api' } as never], counted(repo.rawWrite({ runId: 'b', insert: runRow('b') }), 'create b')),
      log.commitGrouped('a', [{ type: 'step_start', stepId: 's1', index: 1, attempt: 1 } as never], counted(repo.rawWrite({ runId: 'a', steps: [stepRow('a')] }), 'start a/s1')),
      log.commitGrouped('a', [{ type: 'step_start', stepId: 's2', index: 2, attempt: 1 } as never], counted(repo.rawWrite({ runId: 'a', steps: [stepRow('a', { step_id: 's2' })] }), 'start a/s2')),
      log.commitGrouped('b', [{ type: 'step_start', stepId: 's1', index: 1, attempt: 1 } as never], counted(repo.rawWrite({ runId: 'b', steps: [stepRow('b')] }), 'start b/s1')),
      log.commitGrouped('a', [complete, { type: 'complete', result: 1, summary: 's' } as never], counted(repo.rawWrite({ runId: 'a', patch: { status: 'completed', summary: 's', result: '1', updated_at: 'end' }, steps: [stepRow('a', { status: 'done', result: '1' })] }), 'end a')),
    ]);
    // each run's changes folded into its first one of the group (its creation), written there once
    expect(writes).toEqual(['create a+++', 'create b+']);
    const a = await snapshot('a');
    expect(a.events.map((e) => (e as { type: string }).type)).toEqual(['run_created', 'step_start', 'step_start', 'step_complete', 'complete']);
    expect(a.run).toEqual({ status: 'completed', summary: 's', result: '1', updated_at: 'end' });
    expect(a.steps.map((r) => [(r as StepRow).step_id, (r as StepRow).status, (r as StepRow).result])).toEqual([
      ['s1', 'done', '1'],
      ['s2', 'running', null],
    ]);
    expect((await snapshot('b')).steps.map((r) => (r as StepRow).status)).toEqual(['running']);
    // a change without `fold` is written as it is, and nothing folds across it
    writes.length = 0;
    const plain: RawWrite = (raw) => {
      writes.push('plain');
      repo.updateRaw(raw, 'a', { summary: 'plain' });
    };
    await Promise.all([
      log.commitGrouped('a', [{ type: 'audit', kind: '1' } as never], counted(repo.rawWrite({ runId: 'a', patch: { summary: 'first' } }), 'first')),
      log.commitGrouped('a', [{ type: 'audit', kind: '2' } as never], plain),
      log.commitGrouped('a', [{ type: 'audit', kind: '3' } as never], counted(repo.rawWrite({ runId: 'a', patch: { result: '2' } }), 'third')),
    ]);
    expect(writes).toEqual(['first', 'plain', 'third']);
    expect(((await snapshot('a')).run as RunRow).summary).toBe('plain');
  });

  it('a folded change is unfolded when the group fails: each commit is written alone with its own rows', async () => {
    const log = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    await log.commit('a', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow('a'), trx));
    await log.commit('b', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow('b'), trx));
    // the later change of run a fails (a step row of a missing run): the group rolls back, each commit is retried alone
    const settled = await Promise.allSettled([
      log.commitGrouped('a', [{ type: 'step_start', stepId: 's1', index: 1, attempt: 1 } as never], repo.rawWrite({ runId: 'a', patch: { summary: 'started' }, steps: [stepRow('a')] })),
      log.commitGrouped('b', [{ type: 'audit', kind: 'other run' } as never], undefined),
      log.commitGrouped('a', [{ type: 'step_complete', stepId: 's1', index: 1, status: 'done', result: 1, attempts: 1, durationMs: 1 } as never], repo.rawWrite({ runId: 'a', patch: { summary: 'ended' }, steps: [stepRow('missing-run', { status: 'done' })] })),
    ]);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const a = await snapshot('a');
    expect(a.events.map((e) => (e as { type: string }).type)).toEqual(['run_created', 'step_start']);
    expect((a.run as RunRow).summary).toBe('started');
    expect(a.steps.map((r) => (r as StepRow).status)).toEqual(['running']);
  });

  it('a lone commit is written at once: a serial run never waits for the loop to turn', async () => {
    const log = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    await log.commit('r', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow('r'), trx));
    const seen: number[] = [];
    log.subscribe('r', (e) => seen.push(e.seq));
    vi.useFakeTimers({ toFake: ['setImmediate', 'setTimeout', 'setInterval', 'queueMicrotask'] });
    try {
      // one step after the other, each awaited: nothing can advance the (fake) timers in between
      for (let i = 0; i < 3; i++) {
        const step = stepRow('r', { step_id: `s${i}`, status: 'done' });
        const written = await log.commitGrouped('r', [{ type: 'audit', kind: `step ${i}` } as never], (raw) => repo.upsertStepRaw(raw, step), async (trx) => repo.upsertStep(step, trx), true);
        expect(written.map((e) => e.seq)).toEqual([i + 2]);
      }
      expect(seen).toEqual([2, 3, 4]);
      expect((await snapshot('r')).steps).toHaveLength(3);
      // another run committing in the same turn groups: it waits for the end of the turn
      await log.commit('q', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow('q'), trx));
      let other = false;
      const pending = log.commitGrouped('q', [{ type: 'audit', kind: 'other' } as never], undefined, undefined, true).then(() => {
        other = true;
      });
      // so does a later commit of the first run (the queue keeps its order)
      const mine = log.commitGrouped('r', [{ type: 'audit', kind: 'after' } as never], undefined, undefined, true);
      await Promise.resolve();
      expect(other).toBe(false);
      expect(seen).toEqual([2, 3, 4]);
      // the group is written at the end of the turn, and published (its callers told) in the next
      vi.runOnlyPendingTimers();
      await Promise.resolve();
      expect(other).toBe(false);
      expect(seen).toEqual([2, 3, 4]);
      vi.runOnlyPendingTimers();
      await pending;
      expect((await mine)[0]?.seq).toBe(5);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a commit not marked solo, or made while listeners are being called, waits for the end of the turn', async () => {
    const log = new EventLog(opened.db, clock);
    await log.commit('r', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => new RunRepository(opened.db).insert(runRow('r'), trx));
    const order: string[] = [];
    let nested: Promise<unknown> | undefined;
    log.subscribe('r', (e) => {
      order.push(`publish ${e.seq}`);
      if (e.seq === 2) nested = log.commitGrouped('r', [{ type: 'audit', kind: 'from a listener' } as never], undefined, undefined, true).then(() => order.push('nested written'));
    });
    const grouped = log.commitGrouped('r', [{ type: 'audit', kind: 'grouped' } as never], undefined);
    await Promise.resolve();
    expect(order).toEqual([]);
    await grouped;
    expect(order).toEqual(['publish 2']);
    await nested;
    expect(order).toEqual(['publish 2', 'publish 3', 'nested written']);
  });

  it('an SSE frame made from the stored payload text is the frame made from the event itself', async () => {
    const log = new EventLog(opened.db, clock);
    await log.commit('r', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => new RunRepository(opened.db).insert(runRow('r'), trx));
    const events = [
      { type: 'step_complete', stepId: 's1', index: 1, status: 'done', result: { n: 1, text: 'a "quoted" \u2028 line', list: [1, null] }, attempts: 1, durationMs: 2 },
      { type: 'cancel_requested' },
      { type: 'audit', kind: 'hook', runId: 'spoofed', ts: 'spoofed' },
      { type: 'step_complete', stepId: 's2', index: 2, status: 'done', result: { ts: 'nested', seq: 9, inner: { type: 'x' } }, attempts: 1, durationMs: 1 },
    ];
    const written = await log.commitGrouped('r', events as never, undefined, undefined, true);
    const plain = (e: object) => {
      const { type, ...rest } = e as { type: string };
      return JSON.stringify({ type, ...rest });
    };
    expect(payloadJson.has(written[0] as never)).toBe(true);
    expect(payloadJson.has(written[2] as never)).toBe(false); // a payload holding envelope keys is framed from the object
    for (const e of [...written, ...(await log.read('r', 1))]) expect(frame(e)).toBe(`id: ${e.seq}\nevent: ${e.type}\ndata: ${plain({ ...e })}\n\n`);
    // a replay frames the stored rows without parsing them: the same bytes as the live frames
    const rows = await log.readRows('r', 1);
    expect(rows.map(storedFrame)).toEqual(written.map((e) => `id: ${e.seq}\nevent: ${e.type}\ndata: ${plain({ ...e })}\n\n`));
  });

  it('the replay memory keeps each event as its frame\'s bytes: what a replay of the stored rows sends, envelope keys and multi-byte text included', async () => {
    const log = new EventLog(opened.db, clock);
    await log.commit('m', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => new RunRepository(opened.db).insert(runRow('m'), trx));
    const events = [
      { type: 'step_start', stepId: 's1', index: 1, title: 's1', tool: 'echo', arguments: { v: '\u2028' } },
      { type: 'cancel_requested' },
      { type: 'audit', kind: 'hook', runId: 'spoofed', ts: 'spoofed' },
      { type: 'step_complete', stepId: 's0', index: 0, status: 'done', result: { text: '第0步 ✓' }, attempts: 1, durationMs: 1 },
      { type: 'step_complete', stepId: 's1', index: 1, status: 'done', result: { ts: 'nested', seq: 9 }, attempts: 1, durationMs: 1 },
    ];
    await log.commitGrouped('m', events as never, undefined, undefined, true);
    const rows = await log.readRows('m', 0);
    const kept = log.recentAfter('m', 0);
    expect(kept?.first).toBe(1);
    expect(kept?.types).toEqual(rows.map((r) => r.type));
    expect(kept?.bytes.toString('utf8')).toBe(rows.map(storedFrame).join(''));
    const tail = log.recentAfter('m', 2);
    expect(tail?.first).toBe(3);
    expect(tail?.types).toEqual(rows.slice(2).map((r) => r.type));
    expect(tail?.bytes.toString('utf8')).toBe(rows.slice(2).map(storedFrame).join(''));
    expect(log.recentAfter('m', rows.length)?.bytes.length).toBe(0);
    // a log that outgrows its first buffer keeps every frame, multi-byte text included
    const more = Array.from({ length: 40 }, (_, i) => ({ type: 'step_complete', stepId: `s${i}`, index: i, status: 'done', result: { text: `第${i}步 ✓ ${'x'.repeat(200)}` }, attempts: 1, durationMs: 1 }));
    await log.commitGrouped('m', more as never, undefined, undefined, true);
    const all = await log.readRows('m', 0);
    expect(log.recentAfter('m', 0)?.bytes.toString('utf8')).toBe(all.map(storedFrame).join(''));
    expect(log.recentAfter('m', 10)?.bytes.toString('utf8')).toBe(all.slice(10).map(storedFrame).join(''));
  });

  it('the replay memory writes the same bytes for runs committed in one group, timestamps that change, and seqs of every width', async () => {
    let now = Date.parse('2026-03-01T00:00:00Z');
    const log = new EventLog(opened.db, { now: () => now });
    for (const id of ['g1', 'g2']) await log.commit(id, [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => new RunRepository(opened.db).insert(runRow(id), trx));
    for (let i = 0; i < 120; i++) {
      now += i % 3 === 0 ? 1 : 0;
      const a = log.commitGrouped('g1', [{ type: 'step_complete', stepId: `s${i}`, index: i, status: 'done', result: { i, text: `第${i}` }, attempts: 1, durationMs: 1 } as never], undefined);
      const b = log.commitGrouped('g2', [i % 2 ? ({ type: 'cancel_requested' } as never) : ({ type: 'audit', kind: 'note', reason: `r${i} "q"` } as never)], undefined);
      await Promise.all([a, b]);
    }
    for (const id of ['g1', 'g2']) {
      const rows = await log.readRows(id, 0);
      expect(rows).toHaveLength(121);
      expect(new Set(rows.map((r) => r.ts)).size).toBeGreaterThan(1);
      expect(log.recentAfter(id, 0)?.bytes.toString('utf8')).toBe(rows.map(storedFrame).join(''));
      expect(log.recentAfter(id, 99)?.bytes.toString('utf8')).toBe(rows.slice(99).map(storedFrame).join(''));
    }
  });

  it('an event whose payload text its caller made is stored as that text, and reads back as the event', async () => {
    const log = new EventLog(opened.db, clock);
    await log.commit('p', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => new RunRepository(opened.db).insert(runRow('p'), trx));
    const result = { rows: [1, 2], note: 'x "y"' };
    const event = { type: 'step_complete', stepId: 's1', index: 1, status: 'done', attempts: 1, durationMs: 3, result } as never;
    presetJson.set(event, `{"stepId":"s1","index":1,"status":"done","attempts":1,"durationMs":3,"result":${JSON.stringify(result)}}`);
    const [written] = await log.commitGrouped('p', [event], undefined, undefined, true);
    const [row] = await log.readRows('p', 1);
    expect(row?.data).toBe(presetJson.get(event));
    const [back] = await log.read('p', 1);
    expect(back).toEqual(written);
    expect(frame(written as never)).toBe(storedFrame(row as never));
  });

  it('the loop turns once a turn has run a slice, for every caller at once', async () => {
    let now = 0;
    const turn = new LoopTurn(() => now, 5);
    expect(turn.yieldIfLong()).toBeUndefined();
    now = 4;
    expect(turn.yieldIfLong()).toBeUndefined();
    now = 5;
    const a = turn.yieldIfLong();
    const b = turn.yieldIfLong();
    expect(a).toBeDefined();
    expect(b).toBe(a);
    const ended: string[] = [];
    turn.atEnd(() => ended.push('end'));
    await a;
    expect(ended).toEqual(['end']);
    // a new turn starts its own slice
    expect(turn.yieldIfLong()).toBeUndefined();
  });

  it('a grouped commit goes through Kysely while a Kysely transaction holds the connection, and keeps the run order', async () => {
    const log = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    await log.commit('r', [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow('r'), trx));
    let release!: () => void;
    const held = opened.db.transaction().execute(async (trx) => {
      await trx.selectFrom('runs').select('id').execute();
      await new Promise<void>((r) => {
        release = r;
      });
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(opened.raw.inTransaction).toBe(true);
    const first = log.commitGrouped('r', [{ type: 'audit', kind: 'during' } as never], (raw) => repo.updateRaw(raw, 'r', { status: 'failed' }), async (trx) => repo.update('r', { status: 'failed' }, trx));
    await new Promise((r) => setImmediate(r));
    release();
    await held;
    const second = log.commitGrouped('r', [{ type: 'audit', kind: 'after' } as never], undefined);
    const [w1, w2] = await Promise.all([first, second]);
    expect([w1[0]?.seq, w2[0]?.seq]).toEqual([2, 3]);
    expect(((await snapshot('r')).run as { status: string }).status).toBe('failed');
  });

  it('opens the file with synchronous=NORMAL by default and FULL when asked', async () => {
    expect(opened.raw.pragma('synchronous', { simple: true })).toBe(1);
    const other = openDatabase(join(home, 'full'), 'file', 'full');
    expect(other.raw.pragma('synchronous', { simple: true })).toBe(2);
    await other.close();
  });
});
