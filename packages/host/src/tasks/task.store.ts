import type { PermissionMode } from '@fengyu/protocol';
import type { Kysely } from 'kysely';
import type { Db } from '../storage/database';
import type { TaskKind, TaskPriority, TaskState } from './task-submitter';

/**
 * Where task records live. The executor talks only to this interface, so a shared deployment can
 * keep them in another database without touching the executor or the policy.
 */

export interface TaskRecord {
  id: string;
  ownerId: string;
  kind: TaskKind;
  priority: TaskPriority;
  state: TaskState;
  workflowId: string;
  workflowVersion: number;
  runId?: string;
  scheduleId?: string;
  triggerId?: string;
  inputs: Record<string, unknown>;
  permissionMode: PermissionMode;
  submittedMs: number;
  startedMs?: number;
  finishedMs?: number;
  output: { text: string; truncated: boolean };
  error?: { code: string; message: string };
}

export interface TaskListQuery {
  state?: TaskState;
  limit: number;
  /** Only tasks submitted before this cursor (exclusive), for paging. */
  before?: { submittedMs: number; id: string };
}

export interface TaskStore {
  insert(task: TaskRecord): Promise<void>;
  /** Records a state change (start, end, run id). */
  update(id: string, patch: Partial<Pick<TaskRecord, 'state' | 'runId' | 'startedMs' | 'finishedMs' | 'output' | 'error'>>): Promise<void>;
  get(id: string): Promise<TaskRecord | undefined>;
  /** The owner's tasks, newest first. */
  list(ownerId: string, query: TaskListQuery): Promise<TaskRecord[]>;
  /** Marks every queued or running task interrupted (at start: their work cannot be resumed); returns them. */
  interruptLive(nowMs: number, error: { code: string; message: string }): Promise<TaskRecord[]>;
  /** Deletes finished tasks beyond the newest `keep`. */
  prune(keep: number): Promise<void>;
}

interface Row {
  id: string;
  owner: string;
  kind: string;
  priority: string;
  state: string;
  workflow_id: string;
  workflow_version: number;
  run_id: string | null;
  schedule_id: string | null;
  trigger_id: string | null;
  inputs: string;
  permission_mode: string;
  submitted_ms: number;
  started_ms: number | null;
  finished_ms: number | null;
  output_text: string;
  output_truncated: number;
  error_code: string | null;
  error_message: string | null;
}

type Tables = { bg_tasks: Row };

function fromRow(r: Row): TaskRecord {
  return {
    id: r.id,
    ownerId: r.owner,
    kind: r.kind as TaskKind,
    priority: r.priority as TaskPriority,
    state: r.state as TaskState,
    workflowId: r.workflow_id,
    workflowVersion: r.workflow_version,
    ...(r.run_id ? { runId: r.run_id } : {}),
    ...(r.schedule_id ? { scheduleId: r.schedule_id } : {}),
    ...(r.trigger_id ? { triggerId: r.trigger_id } : {}),
    inputs: JSON.parse(r.inputs),
    permissionMode: r.permission_mode as PermissionMode,
    submittedMs: r.submitted_ms,
    ...(r.started_ms !== null ? { startedMs: r.started_ms } : {}),
    ...(r.finished_ms !== null ? { finishedMs: r.finished_ms } : {}),
    output: { text: r.output_text, truncated: r.output_truncated === 1 },
    ...(r.error_code ? { error: { code: r.error_code, message: r.error_message ?? '' } } : {}),
  };
}

/** The single-host store: one SQLite table. */
export class SqliteTaskStore implements TaskStore {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  async insert(t: TaskRecord): Promise<void> {
    await this.db
      .insertInto('bg_tasks')
      .values({
        id: t.id,
        owner: t.ownerId,
        kind: t.kind,
        priority: t.priority,
        state: t.state,
        workflow_id: t.workflowId,
        workflow_version: t.workflowVersion,
        run_id: t.runId ?? null,
        schedule_id: t.scheduleId ?? null,
        trigger_id: t.triggerId ?? null,
        inputs: JSON.stringify(t.inputs),
        permission_mode: t.permissionMode,
        submitted_ms: t.submittedMs,
        started_ms: t.startedMs ?? null,
        finished_ms: t.finishedMs ?? null,
        output_text: t.output.text,
        output_truncated: t.output.truncated ? 1 : 0,
        error_code: t.error?.code ?? null,
        error_message: t.error?.message ?? null,
      })
      .execute();
  }

  async update(id: string, p: Parameters<TaskStore['update']>[1]): Promise<void> {
    const set: Partial<Row> = {};
    if (p.state !== undefined) set.state = p.state;
    if (p.runId !== undefined) set.run_id = p.runId;
    if (p.startedMs !== undefined) set.started_ms = p.startedMs;
    if (p.finishedMs !== undefined) set.finished_ms = p.finishedMs;
    if (p.output !== undefined) {
      set.output_text = p.output.text;
      set.output_truncated = p.output.truncated ? 1 : 0;
    }
    if (p.error !== undefined) {
      set.error_code = p.error.code;
      set.error_message = p.error.message;
    }
    await this.db.updateTable('bg_tasks').set(set).where('id', '=', id).execute();
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    const r = await this.db.selectFrom('bg_tasks').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : undefined;
  }

  async list(ownerId: string, q: TaskListQuery): Promise<TaskRecord[]> {
    let query = this.db.selectFrom('bg_tasks').selectAll().where('owner', '=', ownerId);
    if (q.state) query = query.where('state', '=', q.state);
    if (q.before) {
      const b = q.before;
      query = query.where((eb) => eb.or([eb('submitted_ms', '<', b.submittedMs), eb.and([eb('submitted_ms', '=', b.submittedMs), eb('id', '<', b.id)])]));
    }
    const rows = await query.orderBy('submitted_ms', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
    return rows.map(fromRow);
  }

  async interruptLive(nowMs: number, error: { code: string; message: string }): Promise<TaskRecord[]> {
    const live = await this.db.selectFrom('bg_tasks').selectAll().where('state', 'in', ['queued', 'running']).execute();
    if (live.length === 0) return [];
    await this.db
      .updateTable('bg_tasks')
      .set({ state: 'interrupted', finished_ms: nowMs, error_code: error.code, error_message: error.message })
      .where('state', 'in', ['queued', 'running'])
      .execute();
    return live.map((r) => ({ ...fromRow(r), state: 'interrupted' as const, finishedMs: nowMs, error }));
  }

  async prune(keep: number): Promise<void> {
    const edge = await this.db
      .selectFrom('bg_tasks')
      .select(['finished_ms', 'id'])
      .where('finished_ms', 'is not', null)
      .orderBy('finished_ms', 'desc')
      .orderBy('id', 'desc')
      .offset(keep - 1)
      .limit(1)
      .executeTakeFirst();
    if (!edge || edge.finished_ms === null) return;
    const ms = edge.finished_ms;
    await this.db
      .deleteFrom('bg_tasks')
      .where('finished_ms', 'is not', null)
      .where((eb) => eb.or([eb('finished_ms', '<', ms), eb.and([eb('finished_ms', '=', ms), eb('id', '<', edge.id)])]))
      .execute();
  }
}
