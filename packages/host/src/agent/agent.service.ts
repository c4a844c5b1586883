import type { CrashPoint } from '../config/crash-points';
import { type AgentPlan, FengYuError, isTerminal, type PlanStep, type Problem, type RetryPreview, type RunStatus, renderGoal, secretNamesIn } from '@fengyu/protocol';
import type { Logger } from 'pino';
import { type Clock, isoTime } from '../clock';
import type { SandboxPosture } from '../plugins/posture';
import type { EventLog, NewEvent } from '../events/event-log';
import { type ReleaseCommit, RunReleases } from './let-go';
import type { PermissionGuard } from '../permissions/types';
import type { CatalogSnapshot, ToolCatalog } from '../tools/catalog';
import { answerValues, checkValues } from './input-step';
import { PlanChecker, type PlanCheckConfig } from './plan-check';
import { interruptOrphan } from './orphans';
import { planReadyEvent, planRowText } from './run-text';
import { keepSecretInputs, refreshRunInputs } from './secret-inputs';
import type { GateParking, GateRecorder, InputAnswer } from './gates';
import { answerParked, cancelParked, gateOf, isParkable, type ParkedAnswer, parkedAnswerOf } from './parked';
import { ActiveRun } from './run-executor';
import { newRunId } from './run-id';
import { type CurrentPlan, keptInputAnswer, planRetry, type RetryPlan, replayRequest, reusableExecutions, rewindPlan } from './run-replay';
import type { ResolvedConfig, RunDeps, RunSecrets } from './run-types';
import type { ModelStepRunner, Planner } from './contracts';
import { parsePlan, type RunRepository, type RunRow, type StepExecution } from './run.repository';
import { batchRequests, prepareAll, type FilesResolver, newRunRow, type PreparedRun, resolveConfig, type StartRequest } from './start-request';

/**
 * The agent's lifecycle API: start, approve, cancel, history, resume, fork, rewind, batch.
 * Everything is validated before the run exists; a run row and its first event are written
 * together; live runs are driven by `ActiveRun`.
 */

export type { CurrentPlan, FilesResolver, StartRequest };

export interface AgentServiceDeps {
  events: EventLog;
  repo: RunRepository;
  catalog: ToolCatalog;
  clock: Clock;
  logger: Logger;
  /** Read at each call (a test host may swap the guard). */
  guard: () => PermissionGuard;
  posture: () => SandboxPosture;
  maxStepConcurrency: number;
  /** The owner's default per-call timeout (seconds) of a tool that declares none (`backend.callTimeoutSeconds`). */
  callTimeoutSeconds: (owner: string) => Promise<number>;
  /** Drafts plans from goals; without one, goal-only runs answer `no_chat_backend`. */
  planner?: Planner;
  /** Runs model steps; without one, model steps fail with `no_chat_backend`. */
  modelSteps?: ModelStepRunner;
  /** Resolves a run's `files` to grants; without one, runs with files are refused. */
  filesResolver?: FilesResolver;
  /** This host process's id on a shared database: a graceful stop interrupts only its own runs. */
  hostId?: string;
  /** Crash tests (docs/reliability.md): the host's crash points. */
  crashPoint?: CrashPoint;
  /** The inbox: where the runs' gates are recorded. */
  gates?: GateRecorder;
  /** The owners' secrets (the vault): names to validate `{{secrets.NAME}}`, values for dispatch and redaction. */
  secrets?: RunSecrets;
}

/** How many runs created here keep their owner in memory (`ownerOf`); the oldest is dropped first. */
export const KNOWN_OWNERS = 256;

/** What a retry would do (`POST …/retry/preview`): the contract's type. */
export type { RetryPreview };

/** Runs a background task started (a task, a schedule's fire, a webhook delivery). */

export class AgentService {
  private readonly active = new Map<string, ActiveRun>();
  /** Owners of the runs most recently created here, each added once its creating commit is written. */
  private readonly owners = new Map<string, string>();
  private readonly planner?: Planner;
  private readonly modelSteps?: ModelStepRunner;
  private readonly filesResolver?: FilesResolver;
  private readonly checks = new Map<string, (step: PlanStep) => Problem[]>();
  private readonly planChecker: PlanChecker;
  private posture?: { of: SandboxPosture; text: string };
  /** Set by `close`: runs parked at a gate keep their inbox items across the stop. */
  private stopping = false;
  /** The background task of a parked run, given its slot back (the tasks domain answers). */
  private parkedTask?: (runId: string) => Promise<GateParking | undefined>;
  /** Told of each run that ended `failed` here, once its failure is committed (the error-workflow dispatcher). */
  private failedListener?: (runId: string) => void;
  private readonly releases: RunReleases;

  constructor(private readonly deps: AgentServiceDeps) {
    this.planner = deps.planner;
    this.modelSteps = deps.modelSteps;
    this.filesResolver = deps.filesResolver;
    this.releases = new RunReleases(deps);
    this.planChecker = new PlanChecker(deps.secrets);
  }

  private runDeps(): RunDeps {
    return {
      events: this.deps.events,
      repo: this.deps.repo,
      clock: this.deps.clock,
      logger: this.deps.logger,
      guard: this.deps.guard,
      planner: this.planner,
      modelSteps: this.modelSteps,
      callTimeoutSeconds: this.deps.callTimeoutSeconds,
      ...(this.deps.gates ? { gates: this.deps.gates } : {}),
      validate: (plan, run) => this.validate(plan, run.catalog, run.config, this.checks.get(run.id), run.owner),
      ...(this.deps.crashPoint ? { crashPoint: this.deps.crashPoint } : {}),
      ...(this.deps.secrets ? { secrets: this.deps.secrets } : {}),
    };
  }

  validate(plan: unknown, catalog: CatalogSnapshot, cfg: PlanCheckConfig, extra: ((step: PlanStep) => Problem[]) | undefined, owner: string): AgentPlan {
    return this.planChecker.check(plan, catalog, cfg, extra, owner);
  }

  /** Everything checked before any side effect; returns what `launch` needs. */
  async prepare(req: StartRequest): Promise<PreparedRun> {
    const config = resolveConfig(req.config, req, this.deps.maxStepConcurrency);
    const catalog = req.catalog ?? (await this.deps.catalog.snapshot(req.owner));
    const runId = req.runId ?? newRunId(this.deps.clock.now());
    const hasFiles = Array.isArray(req.files) && req.files.length > 0;
    if (hasFiles && !this.filesResolver) throw new FengYuError('invalid_request', { reason: 'file grants are not available on this host' });
    const fileNames = hasFiles ? ((req.files as Array<{ name?: unknown }>).map((f) => f?.name).filter((n) => typeof n === 'string') as string[]) : [];
    config.fileInputNames = [...new Set([...config.fileInputNames, ...fileNames, ...(req.grants ?? []).map((g) => g.name)])];
    let plan: AgentPlan | undefined;
    await this.deps.secrets?.refresh(req.owner);
    if (typeof req.goal === 'string' && secretNamesIn(req.goal).length > 0) {
      throw new FengYuError('invalid_plan', { count: 1 }, [{ code: 'secret_not_allowed_here', field: 'goal', params: { name: secretNamesIn(req.goal)[0], field: 'goal' } }]);
    }
    if (req.workflow !== undefined && req.workflow !== null) plan = this.validate(req.workflow, catalog, config, req.extraStepCheck, req.owner);
    else if (!this.planner || !(await this.planner.available(req.owner, config.backend))) throw new FengYuError('no_chat_backend');
    if (req.goal !== undefined && typeof req.goal !== 'string') throw new FengYuError('invalid_request', { reason: 'goal must be a string' });
    return { runId, config, catalog, plan };
  }

  async start(req: StartRequest): Promise<string> {
    const p = await this.prepare(req);
    return this.launch(req, p);
  }

  async launch(req: StartRequest, p: PreparedRun, extra: { parentRunId?: string; reuse?: Map<string, StepExecution>; forceReview?: boolean; answered?: InputAnswer } = {}): Promise<string> {
    const { runId, config, catalog, plan } = p;
    let grants = req.grants ?? [];
    if (Array.isArray(req.files) && req.files.length > 0 && this.filesResolver) {
      grants = [...grants, ...(await this.filesResolver(req.owner, runId, req.files)).grants];
    }
    if (extra.forceReview) config.planApproval = true;
    const inputs = await keepSecretInputs(this.deps.secrets, req.owner, runId, req.inputs ?? {}, config.secretInputs ?? []);
    const goal = renderGoal(req.goal ?? plan?.goal, inputs);
    const status: RunStatus = plan ? 'running' : 'planning';
    const now = isoTime(this.deps.clock.now());
    const row = newRunRow(req, p, { goal, status, grants, inputs, parentRunId: extra.parentRunId, now, sandbox: this.postureJson() });
    // a replay takes the parent's kept input answer (its input step ends with it, not asked again)
    const answered = extra.answered;
    const repo = this.deps.repo;
    // A supplied plan is announced in the transaction that creates the run, unless reused steps
    // must be recorded before it without a review (their events come first, then plan_ready).
    const reuse = extra.reuse ?? new Map<string, StepExecution>();
    const announced = plan !== undefined && (config.planApproval || reuse.size === 0);
    const events: NewEvent[] = [{ type: 'run_created', goal, status, origin: row.origin, ...(extra.parentRunId ? { parentRunId: extra.parentRunId } : {}) }];
    if (announced && plan) events.push(planReadyEvent(plan, catalog, row.plan));
    // On SQLite the creating commit is queued for the end of this turn and the run begins at once:
    // its commits queued in this turn (the first steps' starts; a call that may take effect is
    // still made only after its start is written) join that one transaction. The run is answered
    // only once the creating commit is written; if it fails, the run stops having written nothing.
    const joined = this.deps.events.groupsTurn();
    const created = this.deps.events.commitGrouped(
      runId,
      events,
      repo.rawWrite({ runId, insert: row }),
      (trx) => repo.insert(row, trx),
      !joined,
    );
    if (!joined) await created;
    if (req.extraStepCheck) this.checks.set(runId, req.extraStepCheck);
    const run = new ActiveRun(
      { id: runId, owner: req.owner, goal, plan, config, inputs, grants, catalog, reuse, fresh: true, announced, ...(joined ? { created } : {}), parking: req.parking, outerApproval: req.outerApproval, ...(answered ? { answered } : {}) },
      this.runDeps(),
    );
    this.track(run);
    void run.begin();
    if (joined) await created;
    this.knowOwner(runId, req.owner);
    return runId;
  }

  /** A run's owner never changes once its row is written: the newest are kept, the oldest dropped. */
  private knowOwner(runId: string, owner: string): void {
    this.owners.set(runId, owner);
    if (this.owners.size > KNOWN_OWNERS) this.owners.delete(this.owners.keys().next().value as string);
  }

  /**
   * The owner of a run created here recently (its row is written), from memory; undefined when
   * not known here (the caller reads the database).
   */
  ownerOf(runId: string): string | undefined {
    return this.owners.get(runId);
  }

  /** The posture's JSON text, made again only when `posture()` answers another object (read at each call, as before). */
  private postureJson(): string {
    const posture = this.deps.posture();
    if (this.posture?.of !== posture) this.posture = { of: posture, text: JSON.stringify(posture) };
    return this.posture.text;
  }

  private track(run: ActiveRun): void {
    this.active.set(run.id, run);
    void run.ended.then((status) => {
      if (this.releases.has(run)) return;
      this.active.delete(run.id);
      if (status === 'failed') this.failedListener?.(run.id);
      if (!this.stopping) this.deps.gates?.runEnded(run.id);
      this.checks.delete(run.id);
      this.deps.events.forget(run.id);
    });
  }

  private async owned(owner: string, runId: string): Promise<RunRow> {
    await this.releases.settled(runId);
    const row = await this.deps.repo.get(runId);
    if (!row || row.owner !== owner) throw new FengYuError('run_not_found', { runId });
    return row;
  }

  async approve(owner: string, runId: string, body: unknown): Promise<{ gateId: string; kind: string }> {
    await this.releases.settled(runId);
    // a run live here is answered from memory (its owner is known); any other is read first
    let run = this.active.get(runId);
    if (run?.owner !== owner) {
      const row = await this.owned(owner, runId);
      run = this.active.get(runId);
      if (!run) return this.approveParked(row, body);
    }
    const gate = await run.approve(body);
    return { gateId: gate.id, kind: gate.kind };
  }

  /**
   * Answers the run's pending input `{values}` (docs/workflows.md): values that do not satisfy the form are a
   * 400 listing every field and the gate stays; 409 when no input is pending (live, or parked by a
   * host stop). The inbox answers an input item through here.
   */
  async input(owner: string, runId: string, body: unknown): Promise<{ gateId: string; kind: 'input' }> {
    const row = await this.owned(owner, runId);
    const values = answerValues(body);
    const run = this.active.get(runId);
    if (run) {
      const { key, entry } = run.gates.openEntry('input');
      const result = checkValues(entry.gate, values);
      await run.gates.answerStep(key, entry, { kind: 'values', values: result, how: 'answered' }, 'answered');
      return { gateId: entry.gate.id, kind: 'input' };
    }
    const gate = gateOf(row);
    if (gate?.kind !== 'input' || !(await this.parked(row))) throw new FengYuError('no_pending_input', { runId });
    await this.continueParked(row, { kind: 'values', values: checkValues(gate, values) });
    return { gateId: gate.id, kind: 'input' };
  }

  /** The run's open gate, unless answered: live here, or parked by a host stop (the inbox checks an item against it). */
  async pendingGateId(runId: string): Promise<string | undefined> {
    await this.releases.settled(runId);
    const run = this.active.get(runId);
    if (run) return run.openGateId();
    const row = await this.deps.repo.get(runId);
    return row && (await this.parked(row)) ? gateOf(row)?.id : undefined;
  }

  /** Expires the run's open gate `gateId` (the inbox's timer); false when it is not open. */
  async expireGate(runId: string, gateId: string): Promise<boolean> {
    await this.releases.settled(runId);
    const run = this.active.get(runId);
    if (run) return run.gates.expire(gateId);
    const row = await this.deps.repo.get(runId);
    if (!row || !(await this.parked(row)) || gateOf(row)?.id !== gateId) return false;
    // another host's expiry timer (or an answer) may claim it first: then it is not open here
    return this.continueParked(row, { kind: 'expire' }).then(
      () => true,
      (err) => ((err as FengYuError).code === 'no_pending_gate' ? false : Promise.reject(err)),
    );
  }

  /** Whether the run waits at a gate after a host stop (parked: not live here, nothing running). */
  async isParked(runId: string): Promise<boolean> {
    const row = await this.deps.repo.get(runId);
    return row !== undefined && (await this.parked(row));
  }

  /** Shared database: lets go of a live run that only waits at its gate, its task giving its slot back (`let-go.ts`). */
  letGo(runId: string, commit: ReleaseCommit): Promise<boolean> {
    const run = this.active.get(runId);
    return run && !this.stopping ? this.releases.letGo(run, this.active, commit) : Promise.resolve(false);
  }

  /** The tasks domain tells how a parked run's task gets its slot back. */
  onParkedRun(fn: (runId: string) => Promise<GateParking | undefined>): void {
    this.parkedTask = fn;
  }

  /** The error-workflow dispatcher drains its outbox after each failure. */
  onRunFailed(fn: (runId: string) => void): void {
    this.failedListener = fn;
  }

  /**
   * Parked: waiting at its gate, nothing running, and live on no host. On a shared database that is
   * a run its stopping (or dead) host let go of (`host_id` null, see `interruptOrphans`); any host
   * may then answer it, and the answer's claim makes it that host's. A background task's run too:
   * the sweep of its host leaves its task waiting, and the answering host takes it (docs/inbox.md).
   */
  private async parked(row: RunRow): Promise<boolean> {
    if (this.deps.hostId && row.host_id) return false;
    return !this.active.has(row.id) && isParkable(row, await this.deps.repo.steps(row.id));
  }

  /** The approve bodies for a run parked at its gate by a host stop. */
  private async approveParked(row: RunRow, body: unknown): Promise<{ gateId: string; kind: string }> {
    const gate = gateOf(row);
    // an input is answered with values (`input`), never approved
    if (!gate || gate.kind === 'input' || !(await this.parked(row))) throw new FengYuError('no_pending_gate', { runId: row.id });
    const config = JSON.parse(row.config) as ResolvedConfig;
    const answer = await parkedAnswerOf(body, gate, async (plan) => this.validate(plan, await this.deps.catalog.snapshot(row.owner), config, this.checks.get(row.id), row.owner));
    await this.continueParked(row, answer);
    return { gateId: gate.id, kind: gate.kind };
  }

  /** Commits the answer of a parked run's gate, then continues the run in place (after its task holds a slot again). */
  private async continueParked(row: RunRow, answer: ParkedAnswer): Promise<void> {
    const gate = gateOf(row) as NonNullable<ReturnType<typeof gateOf>>;
    const plan = (answer.kind === 'approve' && answer.plan) || parsePlan(row);
    const catalog = await this.deps.catalog.snapshot(row.owner);
    const next = await answerParked(this.deps, row, gate, answer.kind === 'approve' && gate.kind === 'plan' ? { ...answer, plan } : answer, (p) => planRowText(p, catalog));
    if (next.kind === 'ended' || !plan) return;
    await refreshRunInputs(this.deps.secrets, row);
    const config = { ...(JSON.parse(row.config) as ResolvedConfig), planApproval: false };
    const reuse = reusableExecutions(await this.deps.repo.steps(row.id));
    // the task (if any) is adopted once the run is tracked here, so that it follows this run
    let task: GateParking | undefined;
    const parking: GateParking = { parked: (id) => task?.parked(id), resumed: () => task?.resumed() ?? Promise.resolve() };
    const run = new ActiveRun(
      { id: row.id, owner: row.owner, goal: row.goal ?? undefined, plan: next.plan ?? plan, config, inputs: JSON.parse(row.inputs), grants: JSON.parse(row.files ?? '[]'), catalog, reuse, fresh: false, ...(next.step ? { answered: next.step } : {}), parking },
      this.runDeps(),
    );
    this.track(run);
    task = await this.parkedTask?.(row.id);
    void parking.resumed().then(() => run.begin());
  }

  async cancel(owner: string, runId: string): Promise<{ status: RunStatus }> {
    const row = await this.owned(owner, runId);
    const run = this.active.get(runId);
    if (run) {
      await run.cancel();
      return { status: 'cancelled' };
    }
    // parked at its gate by a host stop: it ends here, and its waiting task follows it to that end
    const gate = gateOf(row);
    if (gate && (await this.parked(row)) && (await cancelParked(this.deps, row, gate))) {
      await this.parkedTask?.(row.id);
      return { status: 'cancelled' };
    }
    return { status: (await this.deps.repo.get(runId))?.status ?? row.status };
  }

  /** Resolves when the run reaches a terminal status (immediately if it already has). */
  async waitForEnd(runId: string): Promise<RunStatus> {
    const run = this.active.get(runId);
    if (run) return run.ended;
    const row = await this.deps.repo.get(runId);
    return row?.status ?? 'failed';
  }

  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  /**
   * Marks runs that were live when their host died as interrupted (at start, and at a graceful
   * stop), each once. Without `hosts`, every live run not executing here (one host per database);
   * with `hosts`, only the runs of those hosts (a shared database). Returns how many it interrupted.
   */
  async interruptOrphans(hosts?: { ids: string[]; unowned?: boolean }): Promise<number> {
    const rows = await this.deps.repo.listNonTerminal(hosts);
    let n = 0;
    // a run parked at a gate (nothing running) waits on: its item stays in the inbox; on a shared
    // database the stopped host lets go of it first, so that any host may take the answer
    for (const row of rows) {
      if (this.active.has(row.id)) continue;
      const hostId = this.deps.hostId && row.host_id ? row.host_id : undefined;
      if (await this.parked(hostId ? { ...row, host_id: null } : row)) {
        if (hostId) await this.deps.repo.release(row.id, hostId);
        continue;
      }
      if (await interruptOrphan(this.deps, row)) n += 1;
    }
    return n;
  }

  private checkPosture(row: RunRow): void {
    const was = JSON.parse(row.sandbox) as SandboxPosture;
    if (was.mode === 'sandboxed' && this.deps.posture().mode !== 'sandboxed') throw new FengYuError('sandbox_weakened', { runId: row.id });
  }

  /** Continues a failed/cancelled/interrupted run in place: done steps are reused, plan review first. */
  async resume(owner: string, runId: string): Promise<string> {
    const row = await this.owned(owner, runId);
    if (!['failed', 'cancelled', 'interrupted'].includes(row.status) || this.active.has(runId)) throw new FengYuError('run_not_resumable', { runId, status: row.status });
    this.checkPosture(row);
    const plan = parsePlan(row);
    if (!plan) throw new FengYuError('run_not_resumable', { runId, status: `${row.status} (it has no plan yet)` });
    await refreshRunInputs(this.deps.secrets, row);
    const config = { ...(JSON.parse(row.config) as ResolvedConfig), planApproval: true };
    const executions = await this.deps.repo.steps(runId);
    const reuse = reusableExecutions(executions);
    const uncertain = executions.filter((e) => e.status === 'uncertain').map((e) => e.stepId);
    const catalog = await this.deps.catalog.snapshot(owner);
    await this.deps.events.commit(runId, [{ type: 'resumed', reusedSteps: [...reuse.values()].filter((e) => e.status === 'done' && e.iteration === undefined).map((e) => e.stepId) }], (trx) =>
      this.deps.repo.update(runId, { status: 'running', error: null, finished_at: null, config: JSON.stringify(config), updated_at: isoTime(this.deps.clock.now()) }, trx),
    );
    // an input answered just before the run stopped (its step not committed) is not asked again
    const kept = keptInputAnswer(row, plan, reuse);
    const answered = kept ? { answered: kept } : {};
    const run = new ActiveRun(
      { id: runId, owner, goal: row.goal ?? undefined, plan, config, inputs: JSON.parse(row.inputs), grants: JSON.parse(row.files ?? '[]'), catalog, reuse, fresh: false, uncertain, ...answered },
      this.runDeps(),
    );
    this.track(run);
    void run.begin();
    return runId;
  }

  private async replay(owner: string, runId: string, keep?: number): Promise<string> {
    const row = await this.owned(owner, runId);
    if (!isTerminal(row.status)) throw new FengYuError('run_not_finished', { runId, status: row.status });
    this.checkPosture(row);
    const plan = parsePlan(row);
    if (!plan) throw new FengYuError('run_not_finished', { runId, status: `${row.status} (it has no plan)` });
    const rewound = keep === undefined ? { plan, reuse: new Map<string, StepExecution>() } : rewindPlan(plan, keep, await this.deps.repo.steps(runId));
    await refreshRunInputs(this.deps.secrets, row);
    const req = replayRequest(this.deps.secrets, row, { workflow: rewound.plan, origin: keep === undefined ? 'fork' : 'rewind', workflowVersion: row.workflow_version ?? undefined });
    const p = await this.prepare(req);
    // a rewind keeping an input answered just before its run stopped takes that answer
    const answered = keep === undefined ? undefined : keptInputAnswer(row, rewound.plan, rewound.reuse);
    return this.launch(req, p, { parentRunId: runId, reuse: rewound.reuse, forceReview: true, ...(answered ? { answered } : {}) });
  }

  /**
   * What a retry of a failed or interrupted run would run: the plan of `version` (the run's own,
   * or its workflow's latest published one, read through `current`), and which completed
   * executions it reuses. Checked before anything is written.
   */
  async retryPlan(owner: string, runId: string, version: unknown, current?: CurrentPlan): Promise<RetryPlan> {
    const row = await this.owned(owner, runId);
    return planRetry(row, this.active.has(runId), version, current, () => this.deps.repo.steps(runId));
  }

  /** Retry from the failed step: a new run, started at once with the old run's inputs, files and config, reusing unchanged completed steps. */
  async retry(owner: string, runId: string, version: unknown, current?: CurrentPlan): Promise<string> {
    const { row, plan, reuse, workflowVersion } = await this.retryPlan(owner, runId, version, current);
    this.checkPosture(row);
    await refreshRunInputs(this.deps.secrets, row);
    const req = replayRequest(this.deps.secrets, row, { workflow: plan, planApproval: false, origin: 'retry', workflowVersion });
    const p = await this.prepare(req);
    const answered = keptInputAnswer(row, plan, reuse);
    return this.launch(req, p, { parentRunId: runId, reuse, ...(answered ? { answered } : {}) });
  }

  fork(owner: string, runId: string): Promise<string> {
    return this.replay(owner, runId);
  }

  rewind(owner: string, runId: string, keepSteps: unknown): Promise<string> {
    return this.replay(owner, runId, typeof keepSteps === 'number' ? keepSteps : Number.NaN);
  }

  /** Starts 1..8 isolated runs; every one is validated before any starts. */
  async batch(owner: string, runs: unknown, capabilityMode?: unknown): Promise<string[]> {
    const reqs = batchRequests(owner, runs, capabilityMode);
    const prepared = await prepareAll(reqs, (req) => this.prepare(req));
    const ids: string[] = [];
    for (const [i, req] of reqs.entries()) ids.push(await this.launch(req, prepared[i] as PreparedRun));
    return ids;
  }

  /** Graceful stop: live runs stop writing and are recorded as interrupted (resumable). */
  async close(): Promise<void> {
    this.stopping = true;
    await this.releases.all();
    const live = [...this.active.values()];
    for (const run of live) run.shutdown();
    this.active.clear();
    this.deps.events.flush();
    await this.interruptOrphans(this.deps.hostId ? { ids: [this.deps.hostId] } : undefined);
  }
}
