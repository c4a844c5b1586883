import type { PlanStep, RunStatus, StepFailure } from '@fengyu/protocol';
import type { NewEvent, Trx } from '../events/event-log';
import type { GateOutcome } from './gates';
import type { StepHost } from './run-types';
import type { RunRow, StepRow } from './run.repository';
import { iterationKey } from './run.repository';
import { StepRunner } from './step-runner';

/**
 * One iteration of a forEach body, as the step runner sees its run: the run's own host, with the
 * iteration's item and index, its body results over the run's results, its events tagged with
 * `iteration` and `parentStepId`, its execution rows keyed `<stepId>#<iteration>`, and no step
 * of it ending the run (the loop settles first).
 */

/** The run's results with one iteration's body results over them (what references read). */
class Layered<T = unknown> implements Pick<ReadonlyMap<string, T>, 'get' | 'has'> {
  constructor(
    readonly own: Map<string, T>,
    private readonly outer: ReadonlyMap<string, T>,
  ) {}

  get(key: string): T | undefined {
    return this.own.has(key) ? this.own.get(key) : this.outer.get(key);
  }

  has(key: string): boolean {
    return this.own.has(key) || this.outer.has(key);
  }
}

class LayeredSet implements Pick<ReadonlySet<string>, 'has'> {
  constructor(
    readonly own: Set<string>,
    private readonly outer: ReadonlySet<string> | undefined,
  ) {}

  has(key: string): boolean {
    return this.own.has(key) || (this.outer?.has(key) ?? false);
  }
}

export class BodyHost implements StepHost {
  readonly results: ReadonlyMap<string, unknown>;
  readonly skipped: ReadonlySet<string>;
  readonly iteration: { item: unknown; index: number };
  readonly frame: { iteration: number; parentStepId: string };
  readonly runner: StepRunner;
  /** The body results of this iteration, by step id. */
  readonly own = new Map<string, unknown>();
  readonly ownSkipped = new Set<string>();
  /** The handled failures of this iteration's body steps, over the run's (`{{node.<id>.error}}`). */
  readonly ownFailures = new Map<string, StepFailure>();
  readonly failures: ReadonlyMap<string, StepFailure>;
  /** The JSON text of the last body step's result, when it ended done with one (the loop's result array is made of these). */
  lastJson?: string;
  /** A body step's end may be held like any after a run's first (the loop's progress shows the run moving). */
  readonly settledSteps = 1;
  private readonly ids: readonly string[];
  private readonly at: ReadonlyMap<string, number>;

  constructor(
    private readonly run: StepHost,
    readonly loop: PlanStep,
    item: unknown,
    index: number,
  ) {
    this.results = new Layered(this.own, run.results) as unknown as ReadonlyMap<string, unknown>;
    this.skipped = new LayeredSet(this.ownSkipped, run.skipped) as unknown as ReadonlySet<string>;
    this.failures = new Layered(this.ownFailures, run.failures ?? new Map()) as unknown as ReadonlyMap<string, StepFailure>;
    this.iteration = { item, index };
    this.frame = { iteration: index, parentStepId: loop.id };
    const body = (loop.steps ?? []).map((s) => s.id);
    // `steps.N` counts top-level steps; body ids follow them so that `last` orders body dependencies
    this.ids = [...run.stepIds(), ...body];
    this.at = new Map(body.map((id, i) => [id, i]));
    this.runner = new StepRunner(this);
  }

  get id() {
    return this.run.id;
  }
  get owner() {
    return this.run.owner;
  }
  get config() {
    return this.run.config;
  }
  get catalog() {
    return this.run.catalog;
  }
  get inputs() {
    return this.run.inputs;
  }
  get grants() {
    return this.run.grants;
  }
  get deps() {
    return this.run.deps;
  }
  get stop() {
    return this.run.stop;
  }
  get signal() {
    return this.run.signal;
  }

  stepIds(): readonly string[] {
    return this.ids;
  }

  /** A body step's 1-based position in the body. */
  indexOf(stepId: string): number {
    return (this.at.get(stepId) ?? -1) + 1;
  }

  cancelRequested(): boolean {
    return this.run.cancelRequested();
  }

  liveStatus(): RunStatus {
    return this.run.liveStatus();
  }

  now(): string {
    return this.run.now();
  }

  commit(events: NewEvent[], patch?: Partial<RunRow>, more?: ((trx: Trx) => Promise<void>) | StepRow): Promise<unknown> {
    return this.run.commit(events, patch, more);
  }

  commitQueued(events: NewEvent[], patch?: Partial<RunRow>, more?: StepRow, held?: boolean): Promise<unknown> {
    return this.run.commitQueued(events, patch, more, held);
  }

  stepGate(stepId: string, reason: string, detail: Record<string, unknown>): Promise<GateOutcome> {
    return this.run.stepGate(stepId, reason, { ...detail, ...this.frame });
  }

  /**
   * A body step never ends the run by itself (its loop settles first); its end is written by the
   * loop (`FlowEffects.runBody`), with the iteration's progress when it is the iteration's last.
   */
  holdsEnd(): boolean {
    return true;
  }

  rowKey(stepId: string): string {
    return iterationKey(stepId, this.frame.iteration);
  }
}
