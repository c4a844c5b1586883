/**
 * Crash points (docs/reliability.md): `FENGYU_CRASH_AT=<point>[:<n>]` makes the host SIGKILL itself the n-th
 * time (default 1) it passes the labelled point, so a crash test can stop it at the moment that
 * matters and check what a restart on the same data recovers. Each point is named after where
 * it stands; docs/reliability.md says what a crash there proves.
 */

export const CRASH_POINTS = [
  /** An event row written inside its transaction, before the commit. */
  'run-event-append',
  /** A step's end (`step_complete`) committed, before it is published to subscribers. */
  'step-commit',
  /** A run's terminal event (`complete`, `error`, `cancelled`) committed, before it is published. */
  'run-finish',
  /** A background task admitted (its row committed), before the submitter is answered. */
  'task-admit',
  /** A task's start committed, before its body runs. */
  'task-start',
  /** A schedule occurrence found due, before its claim (nothing may be lost). */
  'schedule-due',
  /** A schedule fire claimed (committed), before its task is submitted. */
  'schedule-claim',
  /** A fire's task submitted, before the fire's outcome (last task) is saved. */
  'schedule-submit',
  /** A webhook delivery's claim written, before its transaction commits. */
  'webhook-claim',
  /** A webhook delivery committed (claim, audit row, task), before its task starts and the sender is answered. */
  'webhook-commit',
  /** A request written to a plugin worker, before its answer. */
  'plugin-call',
  /** A gate's answer committed, before the run goes on. */
  'gate-answer',
  /** A command's process group started, before it ends. */
  'command-running',
  /** A failed run's error-workflow outbox row committed (with the failure), before its task is submitted. */
  'error-workflow-due',
  /** A failed run's error-workflow task submitted, before its outbox row is settled. */
  'error-workflow-submit',
] as const;

export type CrashPointName = (typeof CRASH_POINTS)[number];

/** Called at each labelled point; undefined when no crash point is set (nothing to call). */
export type CrashPoint = (point: CrashPointName) => void;

export interface CrashAt {
  point: CrashPointName;
  /** The pass at which the host dies (1 = the first). */
  n: number;
}

const known: ReadonlySet<string> = new Set(CRASH_POINTS);

/** Parses `<point>[:<n>]`; a clear error names what is wrong and the points there are. */
export function parseCrashAt(text: string): CrashAt {
  const m = /^([a-z-]+)(?::(\d{1,9}))?$/.exec(text.trim());
  const point = m?.[1] ?? text;
  if (!m || !known.has(point)) throw new Error(`FENGYU_CRASH_AT="${text}" names no crash point: expected <point>[:<n>] with a point among ${CRASH_POINTS.join(', ')}`);
  const n = m[2] === undefined ? 1 : Number(m[2]);
  if (n < 1) throw new Error(`FENGYU_CRASH_AT="${text}": the pass count must be 1 or more`);
  return { point: point as CrashPointName, n };
}

/** The crash point function for `at`: kills the process (no cleanup of any kind) at the n-th pass. */
export function crashPointFor(at: CrashAt | undefined, kill: () => void = () => process.kill(process.pid, 'SIGKILL')): CrashPoint | undefined {
  if (!at) return undefined;
  let passes = 0;
  return (point) => {
    if (point === at.point && ++passes === at.n) kill();
  };
}
