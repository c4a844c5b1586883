import { parseDependency } from '@fengyu/protocol';

/**
 * One scope of a run's steps (the plan's top level, or one iteration of a forEach body) as pure
 * data: each step's state, the port it took, and how many of its incoming edges are settled and
 * satisfied. Settling a step settles its outgoing edges; a step whose join can no longer hold is
 * skipped at once, and the skip runs down the graph. No I/O, no clock.
 *
 * An edge is a `dependsOn` entry. It is satisfied when its source ends `done` and, when it names
 * a port, the source took that port; it is skipped when the source was skipped or took another
 * port. A plain edge is satisfied by any port but `error`. A failed source settles nothing: the run
 * fails. A source whose `onError` lets the run go on ends in this scope `done` all the same (its
 * execution records the failure): `continue` takes no port (every dependent runs), `branch` takes
 * `error` (only `x:error` edges are satisfied); a `branch` step that succeeded takes `ok` (a
 * condition: its branch).
 */

export type StepState = 'pending' | 'active' | 'waiting' | 'done' | 'failed' | 'skipped';

/** What the reducer needs of a step: its id, its edges and join, and (a forEach) its body. */
export interface StepNode {
  id: string;
  dependsOn: readonly string[];
  join?: 'all' | 'any';
  /** What a failure of this step does (`fail` when absent): see the header. */
  onError?: 'continue' | 'branch';
  /** A forEach's body steps and how many iterations may be in flight at once. */
  body?: readonly StepNode[];
  concurrency?: number;
}

/** An outgoing edge: the dependent's position and the port the edge names (undefined: any `done`). */
export interface Edge {
  to: number;
  port?: string;
}

/**
 * A scope's dependency graph by step position, made once per plan: `at` maps an id to its
 * position, `out` lists each step's outgoing edges, `needs` counts each step's distinct incoming
 * edges (an unknown source is counted and never settles: that step never becomes ready), `any`
 * marks `join: any`, `bodies` holds each forEach's body graph.
 */
export interface PlanGraph {
  at: ReadonlyMap<string, number>;
  out: readonly (readonly Edge[])[];
  needs: readonly number[];
  any: readonly boolean[];
  bodies: readonly (PlanGraph | undefined)[];
  /** The scope's steps (the body graph's own nodes). */
  nodes: readonly StepNode[];
}

export function planGraph(steps: readonly StepNode[]): PlanGraph {
  const at = new Map<string, number>();
  steps.forEach((s, i) => {
    if (!at.has(s.id)) at.set(s.id, i);
  });
  const out: Edge[][] = steps.map(() => []);
  const needs = steps.map((s, i) => {
    const distinct = new Set(s.dependsOn);
    for (const entry of distinct) {
      const { stepId, port } = parseDependency(entry);
      const j = at.get(stepId);
      if (j !== undefined) out[j]?.push(port === undefined ? { to: i } : { to: i, port });
    }
    return distinct.size;
  });
  const any = steps.map((s) => s.join === 'any');
  const bodies = steps.map((s) => (s.body ? planGraph(s.body) : undefined));
  return { at, out, needs, any, bodies, nodes: steps };
}

export interface StepCounts {
  active: number;
  done: number;
  failed: number;
  skipped: number;
}

/** A scope's state. Arrays by position; a reduction copies them once (`cloneScope`) and then changes the copy. */
export interface Scope {
  graph: PlanGraph;
  status: readonly StepState[];
  /** The port each done step took (a condition's branch); undefined otherwise. */
  port: readonly (string | undefined)[];
  /** Incoming edges not yet settled, by position. */
  open: readonly number[];
  /** Incoming edges satisfied, by position. */
  sat: readonly number[];
  /** 0 when a pending step is ready to start (its join holds), else more: what `decide` reads. */
  unmet: readonly number[];
  counts: Readonly<StepCounts>;
  /** Whether each step was started in this attempt (a step starts at most once). */
  started: readonly boolean[];
}

/** A scope's state under change within one reduction. */
export interface MutableScope extends Scope {
  status: StepState[];
  port: (string | undefined)[];
  open: number[];
  sat: number[];
  unmet: number[];
  counts: StepCounts;
  started: boolean[];
}

export function emptyScope(graph: PlanGraph): Scope {
  const n = graph.needs.length;
  return {
    graph,
    status: new Array<StepState>(n).fill('pending'),
    port: new Array<string | undefined>(n).fill(undefined),
    open: [...graph.needs],
    sat: new Array<number>(n).fill(0),
    unmet: graph.needs.map((k) => k),
    counts: { active: 0, done: 0, failed: 0, skipped: 0 },
    started: new Array<boolean>(n).fill(false),
  };
}

export function cloneScope(s: Scope): MutableScope {
  return { graph: s.graph, status: [...s.status], port: [...s.port], open: [...s.open], sat: [...s.sat], unmet: [...s.unmet], counts: { ...s.counts }, started: [...s.started] };
}

/** Adds `by` to the count `state` belongs to (a waiting step holds its slot: it counts as active). */
export function count(counts: StepCounts, state: StepState | undefined, by: number): void {
  if (state === 'active' || state === 'waiting') counts.active += by;
  else if (state === 'done') counts.done += by;
  else if (state === 'failed') counts.failed += by;
  else if (state === 'skipped') counts.skipped += by;
}

/** Sets a step's state (counts kept), without touching its edges. */
export function setState(s: MutableScope, i: number, next: StepState): void {
  count(s.counts, s.status[i], -1);
  s.status[i] = next;
  count(s.counts, next, 1);
}

/** Whether a pending step's join can no longer hold: `all` with one skipped edge, `any` with every edge settled and none satisfied. */
function joinFails(s: MutableScope, i: number): boolean {
  const needs = s.graph.needs[i] as number;
  const settled = needs - (s.open[i] as number);
  if (s.graph.any[i]) return s.open[i] === 0 && s.sat[i] === 0;
  return settled > (s.sat[i] as number);
}

/** The readiness gap of a step: 0 when its join holds (every edge satisfied; `any`: all settled, one satisfied). */
function gap(s: MutableScope, i: number): number {
  if (s.graph.any[i]) return s.open[i] === 0 && (s.sat[i] as number) > 0 ? 0 : Math.max(1, s.open[i] as number);
  return (s.graph.needs[i] as number) - (s.sat[i] as number);
}

/**
 * Ends step `i` (`done` with the port it took, `failed` or `skipped`) and settles its outgoing
 * edges; pending dependents whose join fails are skipped in turn. Returns the positions skipped
 * by this settle (not `i` itself), in the order they were skipped.
 */
export function settleStep(s: MutableScope, i: number, ended: 'done' | 'failed' | 'skipped', taken?: string): number[] {
  const skipped: number[] = [];
  const work: number[] = [i];
  const [state, port] = handled(s.graph.nodes[i]?.onError, ended, taken);
  setState(s, i, state);
  s.port[i] = state === 'done' ? port : undefined;
  while (work.length) {
    const j = work.shift() as number;
    const st = s.status[j];
    if (st === 'failed') continue;
    for (const edge of s.graph.out[j] ?? []) {
      const k = edge.to;
      s.open[k] = (s.open[k] as number) - 1;
      if (st === 'done' && (edge.port === undefined ? s.port[j] !== ERROR_PORT : edge.port === s.port[j])) s.sat[k] = (s.sat[k] as number) + 1;
      s.unmet[k] = gap(s, k);
      if (s.status[k] === 'pending' && joinFails(s, k)) {
        setState(s, k, 'skipped');
        skipped.push(k);
        work.push(k);
      }
    }
  }
  return skipped;
}

/** The port a step set to `onError: "branch"` takes when it failed. */
export const ERROR_PORT = 'error';

/**
 * How a step's end settles its scope: a failure that `onError` handles settles as `done` (with
 * the port `error` when branching), and a branching step that succeeded without a port of its
 * own takes `ok`.
 */
export function handled(onError: StepNode['onError'], ended: 'done' | 'failed' | 'skipped', port?: string): ['done' | 'failed' | 'skipped', string | undefined] {
  if (ended === 'failed' && onError === 'continue') return ['done', undefined];
  if (ended === 'failed' && onError === 'branch') return ['done', ERROR_PORT];
  if (ended === 'done' && onError === 'branch' && port === undefined) return ['done', 'ok'];
  return [ended, port];
}

/** Whether every step of the scope ended (done, failed or skipped). */
export function scopeSettled(s: Scope): boolean {
  const c = s.counts;
  return c.done + c.failed + c.skipped === s.status.length;
}
