import type { AgentPlan, RunStatus, StepExecution } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { attached } from '../events/attached';
import type { RawWrite, Trx } from '../events/event-log';
import { type Db, dialectOf, preparedOf, statement } from '../storage/database';
import { insertOutboxRaw, type RunFailure } from './error-outbox.repository';

/** Run and step-execution rows: projections of the event log, written inside its commits. */

export interface RunRow {
  id: string;
  owner: string;
  goal: string | null;
  status: RunStatus;
  plan: string | null;
  config: string;
  inputs: string;
  files: string | null;
  gate: string | null;
  summary: string | null;
  error: string | null;
  result: string | null;
  parent_run_id: string | null;
  origin: string;
  sandbox: string;
  workflow_id: string | null;
  workflow_version: number | null;
  last_seq: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** The host process executing the run while it is live (shared database); null on one host. */
  host_id?: string | null;
  /**
   * An input step's answer committed before the step's own commit (`inputAnswerText`): a resume
   * takes it instead of asking again; the step's commit clears it. Null (or absent): none.
   */
  input_answer?: string | null;
}

const LIVE_STATUSES: RunStatus[] = ['planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval', 'awaiting_input'];
/**
 * `status` is live, as the condition of SQLite's partial index `runs_live` (migration 130) states
 * it: comparisons with constants in its order. SQLite reads that index only for a query holding
 * this same condition (not for an IN list, nor for bound values).
 */
const IS_LIVE = sql<boolean>`(${sql.join(
  LIVE_STATUSES.map((s) => sql`status = ${sql.lit(s)}`),
  sql` or `,
)})`;

export interface StepRow {
  run_id: string;
  step_id: string;
  /** `uncertain`: the host stopped while its non-idempotent tool ran (it may have taken effect). */
  status: 'running' | 'done' | 'failed' | 'uncertain' | 'skipped';
  attempts: number;
  result: string | null;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  fingerprint: string | null;
  reused: number;
}

type Tables = {
  runs: RunRow;
  step_executions: StepRow;
}

export type { StepExecution };

/**
 * A body step's execution is keyed `<stepId>#<iteration>` (a step id holds no `#`): one row per
 * (step, iteration) under the table's (run, step) key, no second key column needed.
 */
export function iterationKey(stepId: string, iteration: number): string {
  return `${stepId}#${iteration}`;
}

/** The map key of an execution: its step id, or `<stepId>#<iteration>` for a body step's. */
export function executionKey(e: Pick<StepExecution, 'stepId' | 'iteration'>): string {
  return e.iteration === undefined ? e.stepId : iterationKey(e.stepId, e.iteration);
}

export function toExecution(r: StepRow): StepExecution {
  const hash = r.step_id.indexOf('#');
  return {
    stepId: hash < 0 ? r.step_id : r.step_id.slice(0, hash),
    ...(hash < 0 ? {} : { iteration: Number(r.step_id.slice(hash + 1)) }),
    status: r.status,
    attempts: r.attempts,
    ...(r.result !== null ? { result: JSON.parse(r.result) } : {}),
    ...(r.error !== null ? { error: r.error } : {}),
    ...(r.started_at ? { startedAt: r.started_at } : {}),
    ...(r.finished_at ? { finishedAt: r.finished_at } : {}),
    ...(r.duration_ms !== null ? { durationMs: r.duration_ms } : {}),
    ...(r.fingerprint ? { fingerprint: r.fingerprint } : {}),
    reused: r.reused === 1,
  };
}

/** A run's projection change in one commit: its row inserted or patched, and step rows upserted (every column). */
export interface RowChange {
  runId: string;
  insert?: RunRow;
  patch?: Partial<RunRow>;
  steps?: StepRow[];
  /** The run fails in this change: its error-workflow outbox row is written with it (when its workflow names one). */
  failure?: RunFailure;
  /** Another table's rows written with the change (a gate's inbox item settled by its answer). */
  also?: (raw: Database.Database) => void;
}

/** The change a raw write made by `rawWrite` writes. */
const changeOf = attached<RawWrite, RowChange>();

export interface ListQuery {
  owner: string;
  q?: string;
  status?: RunStatus[];
  /** Only the runs of this workflow (any of its versions). */
  workflowId?: string;
  limit: number;
  cursor?: { createdAt: string; id: string };
}

export class RunRepository {
  private readonly db: Kysely<Tables>;

  /** `hostId`: this host process's id on a shared database; live runs it writes carry it. */
  constructor(
    private readonly base: Db,
    private readonly hostId?: string,
  ) {
    this.db = base.withTables<Tables>();
  }

  private t(trx?: Trx): Kysely<Tables> {
    return (trx as unknown as Kysely<Tables>) ?? this.db;
  }

  async insert(row: RunRow, trx?: Trx): Promise<void> {
    await this.t(trx).insertInto('runs').values(this.hostId ? { ...row, host_id: this.hostId } : row).execute();
  }

  async update(id: string, patch: Partial<RunRow>, trx?: Trx): Promise<void> {
    await this.t(trx).updateTable('runs').set(this.owned(patch)).where('id', '=', id).execute();
  }

  /** Applies `patch` only while the run is still live; false when it already ended (or was swept). */
  async updateIfLive(id: string, patch: Partial<RunRow>, trx?: Trx): Promise<boolean> {
    const r = await this.t(trx).updateTable('runs').set(patch).where('id', '=', id).where('status', 'in', LIVE_STATUSES).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Applies `patch` to a run parked at a gate only while it still waits at that very gate (same
   * status, same gate): of two answers (two hosts on a shared database, or an answer racing the
   * expiry) one takes it, the other finds nothing (false). A patch making the run live names this host.
   */
  async claimParked(row: Pick<RunRow, 'id' | 'status' | 'gate'>, patch: Partial<RunRow>, trx?: Trx): Promise<boolean> {
    if (row.gate === null) return false;
    const r = await this.t(trx).updateTable('runs').set(this.owned(patch)).where('id', '=', row.id).where('status', '=', row.status).where('gate', '=', row.gate).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Lets go of a run parked at a gate by a stopping (or dead) host: it names no host until an answer claims it. */
  async release(id: string, hostId: string): Promise<void> {
    await this.db.updateTable('runs').set({ host_id: null }).where('id', '=', id).where('host_id', '=', hostId).where('status', 'in', ['awaiting_step_approval', 'awaiting_plan_approval', 'awaiting_input']).execute();
  }

  /**
   * Lets go of a live run of `hostId` that waits at its gate with no step running (its background
   * task gives its slot back, docs/inbox.md), in the caller's transaction; true when it did.
   */
  async releaseWaiting(id: string, hostId: string, trx: Trx): Promise<boolean> {
    const r = await this.t(trx)
      .updateTable('runs')
      .set({ host_id: null })
      .where('id', '=', id)
      .where('host_id', '=', hostId)
      .where('gate', 'is not', null)
      .where('status', 'in', ['awaiting_step_approval', 'awaiting_plan_approval', 'awaiting_input'])
      .where((eb) => eb.not(eb.exists(eb.selectFrom('step_executions').select('step_id').where('run_id', '=', id).where('status', '=', 'running'))))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async get(id: string): Promise<RunRow | undefined> {
    return this.db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * An owner's runs, newest first (ties by id). A status filter without `completed` states the
   * condition of `runs_owner_unsettled` word for word, so the planner may read that index; on
   * SQLite each status is read as an ordered range of it and the lists merged (binary order, as
   * SQLite's). Any other listing reads `runs_owner_created`.
   */
  async list(query: ListQuery): Promise<RunRow[]> {
    const statuses = query.status?.length ? [...new Set(query.status)] : undefined;
    if (!statuses) return this.listed(query).execute();
    if (statuses.includes('completed')) return this.listed(query).where('status', 'in', statuses).execute();
    const unsettled = () => this.listed(query).where(sql<boolean>`status <> 'completed'`);
    if (statuses.length === 1) return unsettled().where('status', '=', statuses[0] as RunStatus).execute();
    if (dialectOf(this.base) === 'postgres') return unsettled().where('status', 'in', statuses).execute();
    const lists: RunRow[][] = [];
    for (const status of statuses) lists.push(await unsettled().where('status', '=', status).execute());
    return lists.flat().sort(newestFirst).slice(0, query.limit);
  }

  /** The listing's query without its status filter: owner, workflow, text search, cursor, order and limit. */
  private listed(query: ListQuery) {
    let q = this.db.selectFrom('runs').selectAll().where('owner', '=', query.owner);
    // an equality on workflow_id: the planner may read the partial index runs_owner_workflow (migration 310)
    if (query.workflowId !== undefined) q = q.where('workflow_id', '=', query.workflowId);
    if (query.q) {
      // Case-insensitive on both engines (SQLite's like folds ASCII case; PostgreSQL's does not).
      const like = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where(sql<boolean>`(lower(goal) like lower(${like}) escape '\\' or lower(summary) like lower(${like}) escape '\\' or lower(error) like lower(${like}) escape '\\')`);
    }
    if (query.cursor) {
      const { createdAt, id } = query.cursor;
      q = q.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit);
  }

  /** Live runs; with `hosts`, only those executed by the named hosts (and, with `unowned`, by none). */
  async listNonTerminal(hosts?: { ids: string[]; unowned?: boolean }): Promise<RunRow[]> {
    let q = this.db.selectFrom('runs').selectAll().where(IS_LIVE);
    if (hosts) {
      const { ids, unowned } = hosts;
      q = q.where((eb) => eb.or([...(ids.length ? [eb('host_id', 'in', ids)] : []), ...(unowned ? [eb('host_id', 'is', null)] : [])]));
      if (!ids.length && !unowned) return [];
    }
    return q.execute();
  }

  async upsertStep(row: StepRow, trx?: Trx): Promise<void> {
    await this.t(trx)
      .insertInto('step_executions')
      .values(row)
      .onConflict((oc) => oc.columns(['run_id', 'step_id']).doUpdateSet({ ...row }))
      .execute();
  }

  /**
   * The change as a group commit's raw write. Two changes of one run in one group fold into one
   * (`RawWrite.fold`): the run's row inserted or updated once, with the later patch over the
   * earlier row or patch; each step's row upserted once, as its later row (an upsert sets every
   * column). A later insert does not fold (it is the run's first change).
   */
  rawWrite(change: RowChange): RawWrite {
    const write: RawWrite = (raw) => this.writeChange(raw, change);
    if (change.insert) write.creates = true;
    write.fold = (later) => {
      const next = changeOf.get(later);
      // a change that writes another table is written where it stands (nothing folds into or with it)
      if (!next || next.insert || next.runId !== change.runId || next.also || change.also) return undefined;
      return this.rawWrite(folded(change, next.patch && this.owned(next.patch), next.steps, next.failure));
    };
    changeOf.set(write, change);
    return write;
  }

  private writeChange(raw: Database.Database, c: RowChange): void {
    if (c.insert) this.insertRaw(raw, c.insert);
    else if (c.patch) this.updateRaw(raw, c.runId, c.patch);
    if (c.steps) for (const step of c.steps) this.upsertStepRaw(raw, step);
    if (c.failure) insertOutboxRaw(raw, c.runId, c.failure);
    c.also?.(raw);
  }

  /** The patch with this host's id when it makes the run live (a resume: this host executes it). */
  private owned(patch: Partial<RunRow>): Partial<RunRow> {
    return this.hostId && patch.status && LIVE_STATUSES.includes(patch.status) ? { ...patch, host_id: this.hostId } : patch;
  }

  /** `update` inside a synchronous SQLite transaction (prepared once per set of columns). */
  updateRaw(raw: Database.Database, id: string, given: Partial<RunRow>): void {
    const patch = this.owned(given);
    const keys = Object.keys(patch);
    if (keys.length === 0) return;
    const values = keys.map((k) => (patch as Record<string, unknown>)[k] ?? null);
    statement(raw, updateText(keys)).run(...values, id);
  }

  /** `insert` inside a synchronous SQLite transaction: every column of the row, one statement prepared once. */
  insertRaw(raw: Database.Database, row: RunRow): void {
    // the values as arguments in RUN_COLUMNS' order, then host_id (bound from the arguments: no array read back element by element)
    const r = row;
    statement(raw, INSERT_RUN).run(
      r.id ?? null, r.owner ?? null, r.goal ?? null, r.status ?? null, r.plan ?? null, r.config ?? null, r.inputs ?? null, r.files ?? null, r.gate ?? null, r.summary ?? null, r.error ?? null,
      r.result ?? null, r.parent_run_id ?? null, r.origin ?? null, r.sandbox ?? null, r.workflow_id ?? null, r.workflow_version ?? null, r.last_seq ?? null, r.created_at ?? null, r.updated_at ?? null, r.finished_at ?? null,
      this.hostId ?? r.host_id ?? null,
    );
  }

  /** `get` through a prepared statement on SQLite when no Kysely transaction is open. */
  async getFast(id: string): Promise<RunRow | undefined> {
    const stmt = preparedOf(this.base, 'select * from runs where id = ?');
    if (!stmt) return this.get(id);
    return stmt.get(id) as RunRow | undefined;
  }

  /** The owner of a run (the whole row is not read), through a prepared statement on SQLite when no Kysely transaction is open. */
  async ownerOf(id: string): Promise<string | undefined> {
    const stmt = preparedOf(this.base, 'select owner from runs where id = ?');
    if (!stmt) return (await this.db.selectFrom('runs').select('owner').where('id', '=', id).executeTakeFirst())?.owner;
    return (stmt.get(id) as { owner: string } | undefined)?.owner;
  }

  /** `upsertStep` inside a synchronous SQLite transaction. */
  upsertStepRaw(raw: Database.Database, r: StepRow): void {
    statement(raw, UPSERT_STEP).run(r.run_id, r.step_id, r.status, r.attempts, r.result, r.error, r.started_at, r.finished_at, r.duration_ms, r.fingerprint, r.reused);
  }

  /** Running steps of a run the host lost: `uncertain` ones (listed) or failed `interrupted`. */
  async markInterruptedSteps(runId: string, uncertain: string[], trx?: Trx): Promise<void> {
    const running = this.t(trx).updateTable('step_executions').where('run_id', '=', runId).where('status', '=', 'running');
    if (uncertain.length) await running.where('step_id', 'in', uncertain).set({ status: 'uncertain', error: 'uncertain: the host stopped while its tool was running' }).execute();
    await this.t(trx).updateTable('step_executions').set({ status: 'failed', error: 'interrupted' }).where('run_id', '=', runId).where('status', '=', 'running').execute();
  }

  async deleteSteps(runId: string, keep: string[], trx?: Trx): Promise<void> {
    let q = this.t(trx).deleteFrom('step_executions').where('run_id', '=', runId);
    if (keep.length) q = q.where('step_id', 'not in', keep);
    await q.execute();
  }

  async steps(runId: string): Promise<StepExecution[]> {
    const rows = await this.db.selectFrom('step_executions').selectAll().where('run_id', '=', runId).execute();
    return rows.map(toExecution);
  }
}

/** The columns of a run's row as it is created (`host_id` follows them: the executing host on a shared database, otherwise null). */
const RUN_COLUMNS: readonly Exclude<keyof RunRow, 'host_id'>[] = ['id', 'owner', 'goal', 'status', 'plan', 'config', 'inputs', 'files', 'gate', 'summary', 'error', 'result', 'parent_run_id', 'origin', 'sandbox', 'workflow_id', 'workflow_version', 'last_seq', 'created_at', 'updated_at', 'finished_at'];
const INSERT_RUN = `insert into runs (${RUN_COLUMNS.join(', ')}, host_id) values (${RUN_COLUMNS.map(() => '?').join(', ')}, ?)`;

/** The update statements' texts by the patch's keys in order (joined by commas), each made once its keys are checked. */
const UPDATE_TEXTS = new Map<string, { text: string; keys: number }>();
const UPDATE_SHAPES_KEPT = 64;

/**
 * `update runs set <key> = ?, … where id = ?` for `keys` in their order; a key that is not a plain
 * column name throws. A kept text's keys hold no comma, so as many keys joined to the same string
 * are the same keys.
 */
function updateText(keys: string[]): string {
  const shape = keys.join(',');
  const kept = UPDATE_TEXTS.get(shape);
  if (kept?.keys === keys.length) return kept.text;
  for (const k of keys) if (!/^[a-z_]+$/.test(k)) throw new Error(`not a column: ${k}`);
  const text = `update runs set ${keys.map((k) => `${k} = ?`).join(', ')} where id = ?`;
  if (UPDATE_TEXTS.size < UPDATE_SHAPES_KEPT) UPDATE_TEXTS.set(shape, { text, keys: keys.length });
  return text;
}

const STEP_COLUMNS = ['run_id', 'step_id', 'status', 'attempts', 'result', 'error', 'started_at', 'finished_at', 'duration_ms', 'fingerprint', 'reused'];
// Same effect as `upsertStep`: on conflict every column takes the new row's value.
const UPSERT_STEP = `insert into step_executions (${STEP_COLUMNS.join(', ')}) values (${STEP_COLUMNS.map(() => '?').join(', ')}) on conflict (run_id, step_id) do update set ${STEP_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}`;

/** `first` then `patch` and `steps` of a later change of its run, as one change. */
function folded(first: RowChange, patch: Partial<RunRow> | undefined, steps: StepRow[] | undefined, failure: RunFailure | undefined): RowChange {
  const out: RowChange = { runId: first.runId };
  if (failure ?? first.failure) out.failure = failure ?? first.failure;
  if (first.insert) out.insert = patch ? { ...first.insert, ...patch } : first.insert;
  else out.patch = patch ? { ...first.patch, ...patch } : first.patch;
  if (!steps?.length) out.steps = first.steps;
  else if (!first.steps?.length) out.steps = steps;
  else {
    const rows = [...first.steps];
    for (const step of steps) {
      const same = rows.findIndex((r) => r.step_id === step.step_id && r.run_id === step.run_id);
      if (same < 0) rows.push(step);
      else rows[same] = step;
    }
    out.steps = rows;
  }
  return out;
}

export function parsePlan(row: RunRow): AgentPlan | undefined {
  return row.plan ? (JSON.parse(row.plan) as AgentPlan) : undefined;
}

/** Newest first, ties by id descending (the listing's order). */
function newestFirst(a: RunRow, b: RunRow): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
