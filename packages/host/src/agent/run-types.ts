import type { CrashPoint } from '../config/crash-points';
import type { AgentPlan, PermissionMode, RunStatus, StepFailure } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { EventLog, NewEvent, Trx } from '../events/event-log';
import type { PermissionGuard } from '../permissions/types';
import type { Stop } from '../tools/call-scope';
import type { CatalogSnapshot } from '../tools/catalog';
import type { SecretsView } from '../secrets/vault';
import type { FileGrant } from '../tools/tool';
import type { ModelStepRunner, Planner } from './contracts';
import type { GateOutcome, GateParking, GateRecorder, OuterApproval } from './gates';
import type { StepExecution, RunRepository, RunRow, StepRow } from './run.repository';

/** The shapes shared by the agent service, the run executor and the step runner. */

export interface ResolvedConfig {
  permissionMode: PermissionMode;
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
  /** Inputs the workflow declares secret (`format: "password"`): stored and shown as the marker (agent/secret-inputs.ts). */
  secretInputs?: string[];
}

export interface RunDeps {
  events: EventLog;
  repo: RunRepository;
  clock: Clock;
  logger: Logger;
  guard: () => PermissionGuard;
  planner?: Planner;
  modelSteps?: ModelStepRunner;
  /** The owner's default per-call timeout (seconds) of a tool that declares none (`backend.callTimeoutSeconds`). */
  callTimeoutSeconds: (owner: string) => Promise<number>;
  /** The inbox: where opened gates are recorded (absent in hosts without one). */
  gates?: GateRecorder;
  /** Validates a plan against this run's snapshot; throws invalid_plan with every problem. */
  validate: (plan: unknown, run: { id: string; owner: string; catalog: CatalogSnapshot; config: ResolvedConfig }) => AgentPlan;
  /** Crash tests (docs/reliability.md): `gate-answer`. */
  crashPoint?: CrashPoint;
  /** The owners' secrets: substituted into tool arguments right before dispatch, redacted from results. */
  secrets?: RunSecrets;
}

/** What runs read of the vault (`secrets/vault.ts`). */
export interface RunSecrets {
  view(owner: string): SecretsView;
  /** Reads the owner's secrets again where another host may have changed them. */
  refresh(owner: string): Promise<void>;
  /** One of the owner's internal values (a run's secret input). */
  getInternal(owner: string, name: string): string | undefined;
  /** Seals some of the owner's internal values into the vault. */
  mergeInternal(owner: string, values: Record<string, string>): Promise<void>;
  /** Reads the owner's internal values under these prefixes again where another host may have kept them (a shared database). */
  refreshInternal(owner: string, prefixes: readonly string[]): Promise<void>;
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
  reuse: Map<string, StepExecution>;
  /** A new run (not a resume): announces its supplied plan and reused steps. */
  fresh: boolean;
  /**
   * The supplied plan's `plan_ready` was written with `run_created`, in the transaction that
   * created the run row (which holds the plan and the status `running`): not announced again.
   */
  announced?: boolean;
  /** Steps whose tool may have run before a crash (resume only): shown at the plan review. */
  uncertain?: string[];
  /**
   * The commit creating the run, queued for the group commit at the end of the current turn of
   * the event loop: the run's commits queued in that turn (its first steps' starts, and their ends
   * when they answer at once) are written in the same transaction, after it. When it fails, the
   * run was never stored: the run stops and writes nothing.
   */
  created?: Promise<unknown>;
  /** A background task's slot, given back while a gate waits. */
  parking?: GateParking;
  /** Invoked as a tool from a chat: inner gates raise the chat's approval card. */
  outerApproval?: OuterApproval;
  /** A run continued after a host stop: the gate of this step was answered while it was parked. */
  answered?: { stepId: string; outcome: GateOutcome };
}

/** What the step runner needs of its run (implemented by the run executor). */
export interface StepHost {
  readonly id: string;
  readonly owner: string;
  readonly config: ResolvedConfig;
  readonly catalog: CatalogSnapshot;
  readonly inputs: Record<string, unknown>;
  readonly grants: FileGrant[];
  readonly deps: RunDeps;
  /** The run's cancellation, watched without a signal; `signal` is its real signal, made when read. */
  readonly stop: Stop;
  readonly signal: AbortSignal;
  readonly results: ReadonlyMap<string, unknown>;
  /** Steps this executor has settled: until the first, a step's end is never held (a watcher sees the run move at once). */
  readonly settledSteps: number;
  stepIds(): readonly string[];
  indexOf(stepId: string): number;
  cancelRequested(): boolean;
  /** The status a step start writes (a run waiting at another gate keeps its status). */
  liveStatus(): RunStatus;
  now(): string;
  /** Events plus optional changes of the run row and of one step row (or a Kysely projection), in one transaction. */
  commit(events: NewEvent[], patch?: Partial<RunRow>, more?: ((trx: Trx) => Promise<void>) | StepRow): Promise<unknown>;
  /**
   * The same commit, always queued to the group commit at the end of this turn of the event loop
   * (never written at once): the commits this turn makes after it (the next step's start) share
   * its transaction, and what runs before the turn ends (the next step's call) does not wait for it.
   *
   * `held`: the commit may also wait for the commits of later turns, for up to a slice (see
   * `EventLog.commitGrouped`); only for transitions of a retry-safe call whose call has left (a
   * crash before they are written repeats at most that call, which may be repeated).
   */
  commitQueued(events: NewEvent[], patch?: Partial<RunRow>, more?: StepRow, held?: boolean): Promise<unknown>;
  stepGate(stepId: string, reason: string, detail: Record<string, unknown>): Promise<GateOutcome>;
  /**
   * Whether the caller of the step runner writes this step's end itself, instead of the runner at
   * once: a top-level step whose settling so ends the run now (its end goes with the run's end), a
   * body step (its end goes with its iteration's progress when it ends the iteration).
   */
  holdsEnd(stepId: string, ok: boolean): boolean;
  /** Steps skipped so far (their references resolve to null / ""). */
  readonly skipped?: ReadonlySet<string>;
  /** Failures of steps whose `onError` let the run go on: what `{{node.<id>.error}}` reads. */
  readonly failures?: ReadonlyMap<string, StepFailure>;
  /** Inside a forEach body: the iteration's item and index, and the fields its events carry. */
  readonly iteration?: { item: unknown; index: number };
  readonly frame?: { iteration: number; parentStepId: string };
  /** The execution row's key of a step (`<stepId>#<iteration>` inside a body); default the step id. */
  rowKey?(stepId: string): string;
}
