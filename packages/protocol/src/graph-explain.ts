import { parseDependency, stepKind, stepPorts } from './control-flow';
import type { GraphDiagnostic } from './graph-check';
import type { WorkflowGraph } from './graph-model';
import { type Locale, localize } from './i18n/index';
import type { PlanStep } from './plan';
import { graphToPlan } from './plan-graph';

/**
 * A graph problem in plain words for a person (the AI panel's `diagnose_current_flow`), in
 * their language: a connection to a port the step does not offer says which ports it has and
 * what to do; a bad comparison says which case and which comparison (1-based) of which
 * condition, the field, what is wrong and how to write it. Any other problem is its message.
 * Pure.
 */

/** Comparison problems and the hint that says how to write the comparison instead. */
const COMPARISON_HINTS: Record<string, string> = {
  condition_left_missing: 'explain_hint_left',
  condition_operator_unknown: 'explain_hint_operator',
  condition_right_missing: 'explain_hint_right',
  condition_in_not_array: 'explain_hint_in',
  condition_regex_invalid: 'explain_hint_regex',
  condition_regex_too_long: 'explain_hint_regex',
};

/** True for a problem of one comparison of a condition's case. */
export function isComparisonProblem(d: GraphDiagnostic): boolean {
  return d.code in COMPARISON_HINTS;
}

/** True for a connection to a port that its source step does not offer. */
export function isPortProblem(d: GraphDiagnostic): boolean {
  return d.code === 'step_unknown_dependency' && typeof d.params.dependency === 'string' && parseDependency(d.params.dependency).port !== undefined;
}

/** Every step of a plan, body steps included. */
function allSteps(steps: readonly PlanStep[]): PlanStep[] {
  return steps.flatMap((s) => [s, ...allSteps(s.steps ?? [])]);
}

/**
 * A canvas problem explained in `locale`: for a connection to a port the source step does not
 * offer, which ports it does offer; for a bad comparison, which case and comparison and a hint;
 * otherwise its message.
 */
export function explainDiagnostic(d: GraphDiagnostic, graph: WorkflowGraph, locale: Locale): string {
  const message = localize(d.code, d.params, locale);
  const steps = () => allSteps(graphToPlan(graph).plan.steps);
  if (isPortProblem(d)) {
    const { stepId: source, port } = parseDependency(String(d.params.dependency));
    const from = steps().find((s) => s.id === source);
    if (!from) return message;
    const ports = stepPorts(from);
    const params = { stepId: d.nodeId ?? d.params.stepId, source, port, kind: stepKind(from), ports: ports.map((p) => `"${p}"`).join(', ') };
    if (!ports.length) return localize('explain_port_none', params, locale);
    return localize(stepKind(from) === 'condition' ? 'explain_port_unknown' : 'explain_port_unknown_branch', params, locale);
  }
  const hint = COMPARISON_HINTS[d.code];
  const at = hint ? /^cases\[(\d+)\]\.when\.(?:all|any)\[(\d+)\]/.exec(d.field ?? '') : null;
  if (hint && at) {
    const step = steps().find((s) => s.id === d.nodeId);
    const name = step?.cases?.[Number(at[1])]?.name ?? `#${Number(at[1]) + 1}`;
    const params = { stepId: d.nodeId, case: name, n: Number(at[2]) + 1, field: d.field, problem: message, hint: localize(hint, {}, locale) };
    return localize('explain_comparison', params, locale);
  }
  return message;
}
