/**
 * What `fengyu run` prints as a run streams, as a pure function of its events: the plan at its
 * gate (conditions with their branches, loops with their bodies indented), skipped steps
 * (`○ mail_team skipped`, a body step with its loop and item), failed steps, and a loop's
 * progress (`each: 37/120`) as the progress bar's status and, every tenth of the loop and at
 * its end, as a line, so a log or a pipe shows it too. Body steps never count as steps of the bar.
 */

/** The most skipped body steps listed per loop; the rest are counted in one line at the loop's end. */
export const BODY_SKIPS_LISTED = 10;

interface PlanStepView {
  id: string;
  title?: string;
  tool?: string;
  kind?: string;
  dependsOn?: string[];
  cases?: { name: string }[];
  items?: unknown;
  steps?: PlanStepView[];
}

/** The plan as listed before its approval: one line per step, a loop's body indented under it. */
export function planLines(steps: readonly PlanStepView[], indent = '  '): string[] {
  return steps.flatMap((s) => {
    const after = s.dependsOn?.length ? ` (after ${s.dependsOn.join(', ')})` : '';
    const what =
      s.kind === 'condition' || s.cases
        ? `condition → ${[...(s.cases ?? []).map((c) => c.name), 'else'].join(' | ')}`
        : s.kind === 'forEach' || s.steps
          ? `for each item of ${typeof s.items === 'string' ? s.items : JSON.stringify(s.items)}`
          : (s.title ?? s.tool ?? 'model step');
    return [`${indent}- ${s.id}: ${what}${after}`, ...planLines(s.steps ?? [], `${indent}    `)];
  });
}

/** What one event changes in the display. */
export interface ProgressUpdate {
  /** Lines to print (stderr), in order. */
  lines: string[];
  /** The progress bar's new status, when it changes. */
  status?: string;
  /** True when a top-level step ended (the bar advances by one). */
  advance: boolean;
}

export interface ProgressState {
  /** Skipped body steps seen per loop. */
  bodySkips: Map<string, number>;
}

export const newProgressState = (): ProgressState => ({ bodySkips: new Map() });

type Data = Record<string, any>;

export function progressOf(type: string, d: Data, state: ProgressState): ProgressUpdate {
  if (type === 'step_start') return { lines: [], status: `running ${d.stepId}${d.parentStepId === undefined ? '' : ` (${d.parentStepId} #${d.iteration})`}`, advance: false };
  if (type === 'loop_progress') {
    const status = `${d.stepId}: ${d.done}/${d.total}`;
    const tenth = (n: number) => Math.floor((n * 10) / Math.max(1, d.total));
    const lines = d.done === d.total || tenth(d.done) > tenth(d.done - 1) ? [`  ${status}`] : [];
    if (d.done === d.total) {
      const hidden = (state.bodySkips.get(d.stepId) ?? 0) - BODY_SKIPS_LISTED;
      if (hidden > 0) lines.push(`  ○ ${hidden} more skipped step(s) in ${d.stepId}`);
    }
    return { lines, status, advance: false };
  }
  if (type !== 'step_complete') return { lines: [], advance: false };
  const inBody = d.parentStepId !== undefined;
  const where = inBody ? ` (${d.parentStepId} #${d.iteration})` : '';
  const lines: string[] = [];
  if (d.status === 'skipped') {
    const seen = inBody ? (state.bodySkips.get(d.parentStepId) ?? 0) + 1 : 0;
    if (inBody) state.bodySkips.set(d.parentStepId, seen);
    if (seen <= BODY_SKIPS_LISTED) lines.push(`  ○ ${d.stepId} skipped${where}`);
  } else if (d.status === 'failed') lines.push(`  ✗ ${d.stepId}${where}: ${d.error}`);
  return { lines, status: `${d.stepId}${where} ${d.status}`, advance: !inBody };
}
