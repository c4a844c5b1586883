import type { AgentPlan, PlanStep } from '@fengyu/protocol';

/**
 * Pure edits of an AgentPlan under review (Agent page): reorder, remove, trim, change an
 * instruction, title or argument. Every function returns a new plan; the input is never mutated.
 * Removing a step also drops it from the `dependsOn` of the steps that remain, so the edited
 * plan never points at a step that is gone (references inside arguments are left as written:
 * the host's validation reports them, and the page shows that 400 next to the plan).
 */

/** Plans are JSON; a JSON copy also works on Vue's reactive proxies (structuredClone does not). */
const clone = (plan: AgentPlan): AgentPlan => JSON.parse(JSON.stringify(plan)) as AgentPlan;

function withoutDeps(steps: PlanStep[], removed: ReadonlySet<string>): PlanStep[] {
  return steps.map((s) => {
    if (!s.dependsOn?.some((d) => removed.has(d))) return s;
    const dependsOn = s.dependsOn.filter((d) => !removed.has(d));
    const { dependsOn: _old, ...rest } = s;
    return dependsOn.length ? { ...rest, dependsOn } : rest;
  });
}

/** Moves the step at `from` to `to` (both 0-based, clamped). */
export function moveStep(plan: AgentPlan, from: number, to: number): AgentPlan {
  const next = clone(plan);
  if (from < 0 || from >= next.steps.length) return next;
  const target = Math.max(0, Math.min(next.steps.length - 1, to));
  const [step] = next.steps.splice(from, 1);
  next.steps.splice(target, 0, step as PlanStep);
  return next;
}

/** Removes one step by id. */
export function removeStep(plan: AgentPlan, id: string): AgentPlan {
  const next = clone(plan);
  next.steps = withoutDeps(
    next.steps.filter((s) => s.id !== id),
    new Set([id]),
  );
  return next;
}

/** Keeps the first `keep` steps (at least one); the rest are removed. */
export function trimSteps(plan: AgentPlan, keep: number): AgentPlan {
  const next = clone(plan);
  const n = Math.max(1, Math.min(next.steps.length, Math.floor(keep)));
  const removed = new Set(next.steps.slice(n).map((s) => s.id));
  next.steps = withoutDeps(next.steps.slice(0, n), removed);
  return next;
}

function patchStep(plan: AgentPlan, id: string, patch: (s: PlanStep) => PlanStep): AgentPlan {
  const next = clone(plan);
  next.steps = next.steps.map((s) => (s.id === id ? patch(s) : s));
  return next;
}

/** Sets a model step's instruction. */
export function setInstruction(plan: AgentPlan, id: string, instruction: string): AgentPlan {
  return patchStep(plan, id, (s) => ({ ...s, instruction }));
}

/** Sets (or clears, when empty) a step's title. */
export function setTitle(plan: AgentPlan, id: string, title: string): AgentPlan {
  return patchStep(plan, id, (s) => {
    const { title: _old, ...rest } = s;
    return title.trim() ? { ...rest, title } : rest;
  });
}

/** Toggles whether the step pauses for approval before it runs. */
export function setRequiresApproval(plan: AgentPlan, id: string, on: boolean): AgentPlan {
  return patchStep(plan, id, (s) => {
    const { requiresApproval: _old, ...rest } = s;
    return on ? { ...rest, requiresApproval: true } : rest;
  });
}

/**
 * Parses what the user typed for an argument: valid JSON keeps its type (`3`, `true`, `{…}`,
 * `"quoted"`); anything else is taken as a plain string (so `{{steps.1.result}}` stays text).
 */
export function parseArgumentText(text: string): unknown {
  const t = text.trim();
  if (t === '') return '';
  if (/^[[{"\d-]|^(true|false|null)$/.test(t)) {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}

/** How an argument value is shown for editing (strings raw, the rest as JSON). */
export function argumentText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Sets one argument from the typed text (see `parseArgumentText`). */
export function setArgument(plan: AgentPlan, id: string, name: string, text: string): AgentPlan {
  return patchStep(plan, id, (s) => ({ ...s, arguments: { ...(s.arguments ?? {}), [name]: parseArgumentText(text) } }));
}

/** Removes one argument. */
export function removeArgument(plan: AgentPlan, id: string, name: string): AgentPlan {
  return patchStep(plan, id, (s) => {
    const args = { ...(s.arguments ?? {}) };
    delete args[name];
    return { ...s, arguments: args };
  });
}

/** Whether two plans differ (the review sends an edited plan only when something changed). */
export function planChanged(a: AgentPlan | undefined, b: AgentPlan | undefined): boolean {
  return JSON.stringify(a ?? null) !== JSON.stringify(b ?? null);
}

/** Maps a 400's `details[]` (step id, field, code, message) to the steps of the plan. */
export function problemsByStep(details: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!Array.isArray(details)) return out;
  for (const d of details as Array<Record<string, unknown>>) {
    const key = typeof d.stepId === 'string' ? d.stepId : typeof d.step === 'string' ? d.step : '';
    const msg = [typeof d.field === 'string' ? d.field : '', typeof d.message === 'string' ? d.message : String(d.code ?? '')].filter(Boolean).join(': ');
    out.set(key, [...(out.get(key) ?? []), msg]);
  }
  return out;
}
