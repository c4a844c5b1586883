import { createHash } from 'node:crypto';
import { type AgentPlan, FengYuError, localize, type PlanStep, REDACTED, redactSecrets, type RunStatus, secretFields } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { EventLog, NewEvent, Trx } from '../events/event-log';
import type { PermissionGuard } from '../permissions/types';
import type { CatalogSnapshot } from '../tools/catalog';
import type { FileGrant } from '../tools/tool';
import type { ModelStepRunner, Planner } from './contracts';
import { decide, runResult, type StepStatus } from './decide';
import { GateQueue, type GateOutcome, type OpenGate } from './gates';
import type { Execution, RunRepository, RunRow } from './run.repository';
import { StepRunner } from './step-runner';

/**
 * One run in memory while it is live: its plan, step states, gates and cancellation. Every
 * transition is committed to the event log (with its projection) before anything reports it.
 * `decide()` says what to do next; this class performs it.
 */

export interface ResolvedConfig {
  permissionMode: 'ask' | 'approve-for-me' | 'full-access';
  planApproval: boolean;
  stepApproval: boolean;
  maxConcurrency: number;
  readOnly: boolean;
  backend?: string;
  model?: string;
  /** Invoked as a tool (run_workflow_*): it cannot pause, so any gate fails its step. */
  noGates: boolean;
  /** With noGates: gates pass because the outer tool call was approved. */
  preApproved?: boolean;
  inputNames: string[];
  fileInputNames: string[];
}

export interface RunDeps {
  events: EventLog;
  repo: RunRepository;
  clock: Clock;
  logger: Logger;
  guard: () => PermissionGuard;
  planner: () => Planner | undefined;
  modelSteps: () => ModelStepRunner | undefined;
  callTimeoutSeconds: number;
  /** Validates a plan against this run's snapshot; throws invalid_plan with every problem. */
  validate: (plan: unknown, run: ActiveRun) => AgentPlan;
}

export interface RunInit {
  id: string;
  owner: string;
  goal?: string;
  plan?: AgentPlan;
  config: ResolvedConfig;
  inputs: Record<string, unknown>;
  grants: FileGrant[];
  catalog: CatalogSnapshot;
  /** Completed executions that may be reused (resume, rewind), by step id. */
  reuse: Map<string, Execution>;
  /** Emit step_complete {reused:true} for reused steps (new runs only). */
  announceReuse: boolean;
}

export class ActiveRun {
  readonly id: string;
  readonly owner: string;
  readonly goal?: string;
  plan?: AgentPlan;
  readonly config: ResolvedConfig;
  readonly inputs: Record<string, unknown>;
  readonly grants: FileGrant[];
  readonly catalog: CatalogSnapshot;
  status: RunStatus = 'running';
  readonly stepStatus = new Map<string, StepStatus>();
  readonly results = new Map<string, unknown>();
  readonly errors = new Map<string, string>();
  readonly gates = new GateQueue();
  readonly abort = new AbortController();
  cancelRequested = false;
  /** Set when the host shuts down: nothing more is written; the run is marked interrupted. */
  closed = false;
  private finishing = false;
  private readonly reuse: Map<string, Execution>;
  private readonly announceReuse: boolean;
  private readonly steps: StepRunner;
  private resolveEnd!: (s: RunStatus) => void;
  readonly ended: Promise<RunStatus>;

  constructor(
    init: RunInit,
    readonly deps: RunDeps,
  ) {
    this.id = init.id;
    this.owner = init.owner;
    this.goal = init.goal;
    this.plan = init.plan;
    this.config = init.config;
    this.inputs = init.inputs;
    this.grants = init.grants;
    this.catalog = init.catalog;
    this.reuse = init.reuse;
    this.announceReuse = init.announceReuse;
    this.steps = new StepRunner(this);
    this.ended = new Promise((r) => {
      this.resolveEnd = r;
    });
  }

  now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /** Commits events with an optional projection change of the run row. */
  commit(events: NewEvent[], patch?: Partial<RunRow>, more?: (trx: Trx) => Promise<void>): Promise<unknown> {
    if (this.closed) return Promise.resolve();
    return this.deps.events.commit(this.id, events, async (trx) => {
      if (patch) await this.deps.repo.update(this.id, { ...patch, updated_at: this.now() }, trx);
      if (more) await more(trx);
    });
  }

  /** Entry point: plan (if needed), pass the plan gate (if on), then execute. */
  async begin(): Promise<void> {
    try {
      if (!this.plan) await this.draftPlan();
      if (this.cancelRequested) return this.finish('cancelled');
      if (this.config.planApproval) {
        const outcome = await this.planGate();
        if (outcome.kind !== 'approved') return this.finish('cancelled');
      }
      await this.execute();
    } catch (err) {
      await this.fail(err);
    }
  }

  private async draftPlan(): Promise<void> {
    const planner = this.deps.planner();
    if (!planner) throw new FengYuError('no_chat_backend');
    const req = {
      owner: this.owner,
      goal: this.goal ?? '',
      backend: this.config.backend,
      model: this.config.model,
      catalog: this.catalog,
      inputs: this.inputs,
      signal: this.abort.signal,
      onToken: (text: string) => {
        tokens = tokens.then(() => this.commit([{ type: 'plan_token', text }]).then(() => undefined));
      },
    };
    let tokens: Promise<void> = Promise.resolve();
    let draft = await planner.draft(req);
    await tokens;
    let plan: AgentPlan;
    try {
      plan = this.deps.validate(draft, this);
    } catch (err) {
      const problems = problemTexts(err);
      draft = await planner.repair(req, draft, problems);
      await tokens;
      plan = this.deps.validate(draft, this);
    }
    this.plan = plan;
    await this.commit([{ type: 'plan_ready', plan: redactPlan(plan, this.catalog) }], { plan: JSON.stringify(plan) });
  }

  private planGate(): Promise<GateOutcome> {
    return this.gates.request('plan', 'review the plan', async (gate) => {
      this.status = 'awaiting_plan_approval';
      await this.commit([{ type: 'plan_approval_requested', gateId: gate.id, plan: redactPlan(this.plan as AgentPlan, this.catalog) }], {
        status: 'awaiting_plan_approval',
        gate: JSON.stringify(gate),
      });
    });
  }

  /** Releases the open gate. A plan body (plan gate only) replaces the plan after validation. */
  async approve(body: unknown): Promise<OpenGate> {
    const gate = this.gates.open;
    if (!gate) throw new FengYuError('no_pending_gate', { runId: this.id });
    const isPlan = !!body && typeof body === 'object' && 'steps' in (body as object);
    const reject = !!body && typeof body === 'object' && (body as { decision?: unknown }).decision === 'reject';
    if (gate.kind === 'plan') {
      if (reject) {
        await this.cancel();
        return gate;
      }
      const plan = this.deps.validate(isPlan ? restoreSecrets(body as AgentPlan, this.plan, this.catalog) : this.plan, this);
      this.plan = plan;
      this.status = 'running';
      await this.commit([{ type: 'plan_approved', gateId: gate.id, edited: isPlan, plan: redactPlan(plan, this.catalog) }], { status: 'running', plan: JSON.stringify(plan), gate: null });
      this.gates.resolve({ kind: 'approved', plan });
      return gate;
    }
    if (isPlan) throw new FengYuError('invalid_request', { reason: 'an edited plan can only be sent to a plan approval gate' });
    const queued = this.gates.waiting > 1;
    this.status = queued ? 'awaiting_step_approval' : 'running';
    if (reject) {
      const reason = String((body as { reason?: unknown }).reason ?? 'rejected by the user');
      await this.commit([{ type: 'audit', kind: 'step_rejected', stepId: gate.stepId, reason }], { status: this.status, gate: null });
      this.gates.resolve({ kind: 'rejected', reason });
    } else {
      await this.commit([{ type: 'step_approved', gateId: gate.id, stepId: gate.stepId as string }], { status: this.status, gate: null });
      this.gates.resolve({ kind: 'approved' });
    }
    return gate;
  }

  /** Opens a step gate (or fails fast when this run may not pause). */
  async stepGate(stepId: string, reason: string, detail: Record<string, unknown>): Promise<GateOutcome> {
    if (this.config.noGates && this.config.preApproved) {
      await this.commit([{ type: 'audit', kind: 'gate_preapproved', stepId, reason: `${reason}; approved with the outer tool call` }]);
      return { kind: 'approved' };
    }
    if (this.config.noGates) return { kind: 'rejected', reason: `approval required (${reason}), but a run invoked as a tool cannot pause for approval` };
    return this.gates.request(
      'step',
      reason,
      async (gate) => {
        this.status = 'awaiting_step_approval';
        await this.commit([{ type: 'step_approval_requested', gateId: gate.id, stepId, reason, ...detail }], {
          status: 'awaiting_step_approval',
          gate: JSON.stringify(gate),
        });
      },
      stepId,
      detail,
    );
  }

  /** Host shutdown: stop writing, abort tool calls, let the caller record `interrupted`. */
  shutdown(): void {
    this.closed = true;
    this.finishing = true;
    this.abort.abort(new FengYuError('tool_cancelled', { name: 'run' }));
    this.gates.cancelAll();
    this.resolveEnd('interrupted');
  }

  async cancel(): Promise<void> {
    if (this.cancelRequested || this.finishing) return;
    this.cancelRequested = true;
    await this.commit([{ type: 'cancel_requested' }]);
    this.abort.abort(new FengYuError('tool_cancelled', { name: 'run' }));
    this.gates.cancelAll();
    this.tick();
  }

  private async execute(): Promise<void> {
    const plan = this.plan as AgentPlan;
    for (const s of plan.steps) this.stepStatus.set(s.id, 'pending');
    const reused: NewEvent[] = [];
    for (const s of plan.steps) {
      const prior = this.reuse.get(s.id);
      if (!prior || prior.status !== 'done' || prior.fingerprint !== fingerprint(s)) continue;
      this.stepStatus.set(s.id, 'done');
      this.results.set(s.id, prior.result);
      if (this.announceReuse) {
        reused.push({ type: 'step_complete', stepId: s.id, index: plan.steps.indexOf(s) + 1, status: 'done', result: prior.result, attempts: prior.attempts, durationMs: 0, reused: true });
      }
    }
    if (reused.length) {
      await this.commit(reused, undefined, async (trx) => {
        for (const s of plan.steps) {
          const prior = this.reuse.get(s.id);
          if (prior && this.stepStatus.get(s.id) === 'done') await this.steps.persistReused(trx, s, prior);
        }
      });
    }
    if (!this.config.planApproval) {
      this.status = 'running';
      await this.commit([{ type: 'plan_ready', plan: redactPlan(plan, this.catalog) }], { status: 'running', plan: JSON.stringify(plan) });
    }
    this.tick();
  }

  /** Asks `decide()` what to do and does it. Called after every step settles. */
  tick(): void {
    if (this.finishing || !this.plan || this.stepStatus.size === 0) {
      if (this.cancelRequested && !this.finishing && (this.stepStatus.size === 0 || !this.plan)) void this.finish('cancelled');
      return;
    }
    const d = decide({ steps: this.plan.steps, status: this.stepStatus, maxConcurrency: this.config.maxConcurrency, cancelRequested: this.cancelRequested });
    if (d.kind === 'launch') {
      for (const id of d.stepIds) {
        this.stepStatus.set(id, 'active');
        const step = this.plan.steps.find((s) => s.id === id) as PlanStep;
        void this.steps.run(step).finally(() => this.tick());
      }
    } else if (d.kind === 'finish') void this.finish(d.outcome);
  }

  async finish(outcome: 'completed' | 'failed' | 'cancelled'): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    const end = { finished_at: this.now(), gate: null };
    try {
      if (outcome === 'completed') {
        const plan = this.plan as AgentPlan;
        const result = runResult(plan.steps, this.results);
        const summary = await this.summary(plan);
        await this.commit([{ type: 'complete', result, summary }], { ...end, status: 'completed', summary, result: JSON.stringify(result ?? null) });
        this.status = 'completed';
      } else if (outcome === 'failed') {
        const message = this.failureMessage();
        await this.commit([{ type: 'error', message }], { ...end, status: 'failed', error: message });
        this.status = 'failed';
      } else {
        await this.commit([{ type: 'cancelled' }], { ...end, status: 'cancelled' });
        this.status = 'cancelled';
      }
    } catch (err) {
      this.deps.logger.error({ runId: this.id, err }, 'could not persist the end of a run');
    }
    this.resolveEnd(this.status);
    if (this.status === 'completed' || this.status === 'failed') void this.runEndHooks();
  }

  private async runEndHooks(): Promise<void> {
    const guard = this.deps.guard();
    if (!guard.runEnded) return;
    try {
      const audits = await guard.runEnded({ runId: this.id, owner: this.owner, status: this.status as 'completed' | 'failed', goal: this.goal });
      if (audits.length) await this.commit(audits.map((a) => ({ type: 'audit', kind: 'hook', ...a }) as NewEvent));
    } catch (err) {
      this.deps.logger.warn({ runId: this.id, err }, 'run end hooks failed');
    }
  }

  private async summary(plan: AgentPlan): Promise<string> {
    const planner = this.deps.planner();
    if (planner?.summarize) {
      try {
        const text = await planner.summarize({
          owner: this.owner,
          goal: this.goal,
          plan,
          results: Object.fromEntries(this.results),
          backend: this.config.backend,
          model: this.config.model,
          signal: this.abort.signal,
        });
        if (text) return text;
      } catch (err) {
        this.deps.logger.warn({ runId: this.id, err }, 'summary failed; using the plain one');
      }
    }
    return `Completed ${plan.steps.length} step(s)${this.goal ? ` for: ${this.goal}` : ''}.`;
  }

  private failureMessage(): string {
    for (const s of this.plan?.steps ?? []) {
      const e = this.errors.get(s.id);
      if (e) return `Step "${s.id}" failed: ${e}`;
    }
    return 'The run failed.';
  }

  /** Fails the run outside of a step (planning, validation of an edited plan, storage). */
  private async fail(err: unknown): Promise<void> {
    if (this.finishing) return;
    if (this.cancelRequested) return this.finish('cancelled');
    this.finishing = true;
    const message = errorText(err);
    try {
      const code = (err as { code?: string }).code;
      await this.commit([{ type: 'error', message, ...(code ? { code } : {}), ...(err instanceof FengYuError && err.details ? { details: err.details } : {}) }], {
        status: 'failed',
        error: message,
        finished_at: this.now(),
        gate: null,
      });
    } catch (e) {
      this.deps.logger.error({ runId: this.id, err: e }, 'could not persist a run failure');
    }
    this.status = 'failed';
    this.resolveEnd('failed');
  }
}

/** The plan as events and the API show it: secret tool arguments replaced (the row keeps them). */
export function redactPlan(plan: AgentPlan, catalog: CatalogSnapshot): AgentPlan {
  return { ...plan, steps: plan.steps.map((s) => (s.tool && s.arguments ? { ...s, arguments: redactSecrets(s.arguments, catalog.get(s.tool)?.inputSchema) } : s)) };
}

/** An edited plan sent back from a review carries `[redacted]` where a secret was: keep the original. */
function restoreSecrets(edited: AgentPlan, current: AgentPlan | undefined, catalog: CatalogSnapshot): AgentPlan {
  if (!edited || !Array.isArray(edited.steps) || !current) return edited;
  return {
    ...edited,
    steps: edited.steps.map((s) => {
      const before = current.steps.find((c) => c.id === s?.id);
      if (!s?.tool || !s.arguments || !before?.arguments) return s;
      const args = { ...s.arguments };
      for (const f of secretFields(catalog.get(s.tool)?.inputSchema)) if (args[f] === REDACTED && f in before.arguments) args[f] = before.arguments[f];
      return { ...s, arguments: args };
    }),
  };
}

/** Identity of what a step does (a digest: arguments may hold secrets). Equal ⇒ reusable on resume. */
export function fingerprint(step: PlanStep): string {
  return createHash('sha256')
    .update(JSON.stringify([step.tool ?? null, step.arguments ?? null, step.instruction ?? null]))
    .digest('hex');
}

export function errorText(err: unknown): string {
  if (err instanceof FengYuError) {
    const base = localize(err.code, err.params);
    const problems = problemTexts(err);
    return problems.length ? `${base} ${problems.join('; ')}` : base;
  }
  return err instanceof Error ? err.message : String(err);
}

function problemTexts(err: unknown): string[] {
  const details = (err as { details?: unknown }).details;
  if (!Array.isArray(details)) return [];
  return details.map((p: { code: string; params?: Record<string, unknown>; message?: string }) => p.message ?? localize(p.code, p.params ?? {}));
}
