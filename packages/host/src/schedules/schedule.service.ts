import { dropKeptInputs, type InputVault, keepInputs } from '../agent/secret-inputs';
import { randomBytes } from 'node:crypto';
import { checkInputs, FengYuError, inputContract, type Locale, localize, type Problem, type ScheduleFile, type ScheduleView, secretInputNames } from '@fengyu/protocol';
import type { FileRepository } from '../files/file.repository';
import { checkKeptFiles } from '../files/kept-files';
import type { TaskFile } from '../tasks/task.store';
import type { Clock, SandboxPosture } from '../context';
import type { PermissionGuard } from '../permissions/types';
import type { CatalogSnapshot } from '../tools/catalog';
import { assertUnattendedRunnable } from '../workflows/unattended-check';
import { contentOf, type VersionRow, type WorkflowRow } from '../workflows/workflow.repository';
import { expiryOf, fireTimes, nextFire, type Recurrence } from './recurrence';
import { NEVER_FIRED, type RecordedError, type ScheduleRepository, type ScheduleRow } from './schedule.repository';
import { parseCreateBody, parsePreviewBody } from './schedule-input';
import type { ScheduleLoop } from './schedule-loop';

/**
 * Creating, listing, previewing and deleting schedules. Everything is validated before the row
 * is written (the body, the workflow — published, inputs bound — the unattended-mode check, the
 * owner's limit); the limit is counted and the row inserted in one transaction.
 */

export const MAX_LIVE_SCHEDULES = 50;
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 100;

export type { ScheduleView };

export interface ScheduleServiceDeps {
  repo: ScheduleRepository;
  loop: ScheduleLoop;
  clock: Clock;
  posture: () => SandboxPosture;
  /** The workflows a schedule may name (owner-scoped; unknown → workflow_not_found). */
  workflows: {
    row(owner: string, id: string): Promise<WorkflowRow>;
    versionRow(owner: string, id: string, version: number): Promise<VersionRow>;
  };
  /** The owner's catalog without workflow tools (what a scheduled run sees). */
  baseCatalog: (owner: string) => Promise<CatalogSnapshot>;
  guard: () => PermissionGuard;
  /** The zone of calendar schedules that name none. */
  hostZone: string;
  maxLive?: number;
  /** The uploads a schedule keeps (its own copies); without it a schedule takes no files. */
  files?: KeptFileStore;
  /** Keeps the secret inputs' values (`schedule:<id>/input/<name>`); the row and view keep the marker. */
  vault?: InputVault;
}

/** Where a schedule's kept copies of uploads come from and go back to. */
export interface KeptFileStore {
  repo: Pick<FileRepository, 'get'>;
  keep(owner: string, id: string): Promise<{ id: string; name: string; size: number }>;
  release(owner: string, id: string): Promise<void>;
}

const newId = () => `sch_${randomBytes(8).toString('hex')}`;
const iso = (ms: number) => new Date(ms).toISOString();

export function toView(row: ScheduleRow, locale: Locale = 'en'): ScheduleView {
  const err = row.last_error ? (JSON.parse(row.last_error) as RecordedError) : undefined;
  return {
    id: row.id,
    workflowId: row.workflow_id,
    recurrence: JSON.parse(row.recurrence) as Recurrence,
    permissionMode: row.permission_mode,
    inputs: JSON.parse(row.inputs) as Record<string, unknown>,
    ...(row.files ? { files: JSON.parse(row.files) as ScheduleFile[] } : {}),
    createdAt: row.created_at,
    nextRunAt: row.next_run_ms === null ? null : iso(row.next_run_ms),
    ...(row.expires_ms !== null ? { expiresAt: iso(row.expires_ms) } : {}),
    triggerCount: row.trigger_count,
    missedFires: row.missed_fires,
    ...(err ? { lastError: { code: err.code, message: localize(err.code, err.params, locale), at: err.at } } : {}),
    ...(row.last_task_id ? { lastTaskId: row.last_task_id } : {}),
    state: row.state,
    ...(row.paused_reason ? { pausedReason: row.paused_reason } : {}),
  };
}

export class ScheduleService {
  constructor(private readonly deps: ScheduleServiceDeps) {}

  get hostZone(): string {
    return this.deps.hostZone;
  }

  async create(owner: string, raw: unknown): Promise<ScheduleRow> {
    const body = parseCreateBody(raw, this.deps.hostZone);
    const workflow = await this.deps.workflows.row(owner, body.workflowId);
    if (workflow.published_version === null) throw new FengYuError('schedule_workflow_draft', { id: workflow.id, field: 'workflowId' }, [{ code: 'schedule_workflow_draft', field: 'workflowId', params: { id: workflow.id, field: 'workflowId' } }]);
    const content = contentOf(await this.deps.workflows.versionRow(owner, workflow.id, workflow.published_version));
    // Picked files are kept with the schedule (checked here, copied below); shared directories are created per run.
    const contract = inputContract(content.inputSchema);
    const picked = await checkKeptFiles(this.deps.files?.repo ?? { get: async () => undefined }, owner, body.files, contract);
    const bound = checkInputs(content.inputSchema, body.inputs, [...contract.sharedDirectories, ...picked.map((f) => f.name)]);
    if (!bound.ok) throw inputsError(bound.problems);
    const catalog = await this.deps.baseCatalog(owner);
    await assertUnattendedRunnable({ owner, plan: content.plan, permissionMode: body.permissionMode, tools: catalog.tools, guard: this.deps.guard() }, 'schedule_needs_unattended_mode');
    const kept = await this.keep(owner, picked);

    const now = this.deps.clock.now();
    const next = body.runImmediately ? now : nextFire(body.recurrence, now, now);
    const expires = expiryOf(body.recurrence, now);
    const id = newId();
    // a secret input's value goes into the vault before the row (which keeps the marker) is written
    let inputs: Record<string, unknown>;
    try {
      inputs = await keepInputs(this.deps.vault, owner, `schedule:${id}`, body.inputs, secretInputNames(content.inputSchema));
    } catch (e) {
      await this.release(owner, kept);
      throw e;
    }
    const row: ScheduleRow = {
      id,
      owner,
      workflow_id: workflow.id,
      recurrence: JSON.stringify(body.recurrence),
      permission_mode: body.permissionMode,
      inputs: JSON.stringify(inputs),
      files: kept.length ? JSON.stringify(kept) : null,
      created_at: iso(now),
      anchor_ms: now,
      next_run_ms: next ?? null,
      expires_ms: expires ?? null,
      ...NEVER_FIRED,
      sandboxed: this.deps.posture().mode === 'sandboxed' ? 1 : 0,
      updated_at: iso(now),
    };
    const limit = this.deps.maxLive ?? MAX_LIVE_SCHEDULES;
    try {
      await this.deps.repo.transaction(async (trx) => {
        if ((await this.deps.repo.countLive(owner, trx)) >= limit) throw new FengYuError('schedule_limit', { limit }, [{ code: 'schedule_limit', field: 'workflowId', params: { limit } }]);
        await this.deps.repo.insert(row, trx);
      });
    } catch (e) {
      await this.release(owner, kept);
      await dropKeptInputs(this.deps.vault, owner, `schedule:${id}`);
      throw e;
    }
    if (body.runImmediately) await this.deps.loop.fire(row);
    this.deps.loop.wake();
    return (await this.deps.repo.get(owner, row.id)) ?? row;
  }

  async get(owner: string, id: string): Promise<ScheduleRow> {
    const row = await this.deps.repo.get(owner, id);
    if (!row) throw new FengYuError('schedule_not_found', { id });
    return row;
  }

  async list(owner: string, limit = DEFAULT_PAGE, cursor?: string): Promise<{ items: ScheduleRow[]; nextCursor?: string }> {
    let after: { createdAt: string; id: string } | undefined;
    if (cursor) {
      const at = await this.deps.repo.get(owner, cursor);
      if (!at) throw new FengYuError('invalid_request', { reason: 'cursor does not name one of your schedules' });
      after = { createdAt: at.created_at, id: at.id };
    }
    const rows = await this.deps.repo.list(owner, limit + 1, after);
    const items = rows.slice(0, limit);
    return { items, ...(rows.length > limit ? { nextCursor: (items.at(-1) as ScheduleRow).id } : {}) };
  }

  /**
   * Stops future fires and releases the files the schedule kept; tasks already running keep
   * their grants, a fire still queued then fails naming the released upload.
   */
  async delete(owner: string, id: string): Promise<void> {
    const row = await this.deps.repo.get(owner, id);
    if (!row || !(await this.deps.repo.delete(owner, id))) throw new FengYuError('schedule_not_found', { id });
    if (row.files) await this.release(owner, JSON.parse(row.files) as ScheduleFile[]);
    // a fire still queued then runs with the marker
    await dropKeptInputs(this.deps.vault, owner, `schedule:${id}`);
  }

  /** The schedule's own copies of the picked uploads (all or none). */
  private async keep(owner: string, picked: TaskFile[]): Promise<ScheduleFile[]> {
    const files = this.deps.files;
    if (!files || picked.length === 0) return [];
    const kept: ScheduleFile[] = [];
    try {
      for (const f of picked) {
        const entry: ScheduleFile = { name: f.name, refs: [] };
        kept.push(entry);
        for (const id of f.refs) {
          const ref = await files.keep(owner, id);
          entry.refs.push({ id: ref.id, name: ref.name, size: ref.size });
        }
      }
      return kept;
    } catch (e) {
      await this.release(owner, kept);
      throw e;
    }
  }

  private async release(owner: string, kept: ScheduleFile[]): Promise<void> {
    for (const f of kept) for (const r of f.refs) await this.deps.files?.release(owner, r.id);
  }

  /** The next fire instants strictly after `from` (default now; an interval is anchored at `from`). */
  preview(raw: unknown): string[] {
    const body = parsePreviewBody(raw, this.deps.hostZone);
    const from = body.from ?? this.deps.clock.now();
    try {
      return fireTimes(body.recurrence, from, from, body.count).map(iso);
    } catch (e) {
      // a fire time past what a date can hold: the request's `from` is out of range, not a host fault
      if (e instanceof RangeError) throw new FengYuError('invalid_request', { reason: '"from" is too far in the future for this recurrence' }, undefined, { cause: e });
      throw e;
    }
  }
}

function inputsError(problems: Problem[]): FengYuError {
  const named = problems.map((p) => ({ ...p, field: p.field === 'inputs' ? 'inputs' : `inputs.${p.field ?? ''}` }));
  const fields = [...new Set(named.map((p) => p.field))].join(', ');
  return new FengYuError('workflow_inputs_invalid', { fields }, named);
}
