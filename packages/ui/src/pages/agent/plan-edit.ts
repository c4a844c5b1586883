import type { AgentPlan, PlanStep } from '@fengyu/protocol';

/**
 * Pure edits of an AgentPlan under review (Agent page): reorder, remove, trim, change an
 * instruction, title or argument. Every function returns a new plan; the input is never mutated.
 * Removing a step also drops it from the `dependsOn` of the steps that remain, so the edited
 * plan never points at a step that is gone; positional `{{steps.N}}` references follow their step
 * (see `keepStepRefs`).
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

const STEP_REF = /\{\{(\s*)steps\.(\d+)\./g;

function remapValue(value: unknown, map: (n: number) => number | string | undefined): unknown {
  if (typeof value === 'string')
    return value.replace(STEP_REF, (all, sp: string, n: string) => {
      const next = map(Number(n));
      if (next === undefined) return all;
      return typeof next === 'number' ? `{{${sp}steps.${next}.` : `{{${sp}node.${next}.`;
    });
  if (Array.isArray(value)) return value.map((v) => remapValue(v, map));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, remapValue(v, map)]));
  return value;
}

/**
 * `{{steps.N…}}` references are positional: after steps moved or were removed, each one is
 * rewritten to the new position of the step it meant. A reference to a removed step becomes
 * `{{node.<removed id>…}}`, so it can never silently point at another step: the host's
 * validation reports the unknown step next to the plan.
 */
function keepStepRefs(before: AgentPlan, after: AgentPlan): AgentPlan {
  const oldIds = before.steps.map((s) => s.id);
  const map = (n: number) => {
    const id = oldIds[n - 1];
    if (id === undefined) return undefined;
    const at = after.steps.findIndex((s) => s.id === id);
    return at < 0 ? id : at + 1;
  };
  after.steps = after.steps.map((s) => {
    const next = { ...s };
    if (s.arguments) next.arguments = remapValue(s.arguments, map) as Record<string, unknown>;
    if (typeof s.instruction === 'string') next.instruction = remapValue(s.instruction, map) as string;
    return next;
  });
  if (typeof after.goal === 'string') after.goal = remapValue(after.goal, map) as string;
  return after;
}

/** Moves the step at `from` to `to` (both 0-based, clamped). */
export function moveStep(plan: AgentPlan, from: number, to: number): AgentPlan {
  const next = clone(plan);
  if (from < 0 || from >= next.steps.length) return next;
  const target = Math.max(0, Math.min(next.steps.length - 1, to));
  const [step] = next.steps.splice(from, 1);
  next.steps.splice(target, 0, step as PlanStep);
  return keepStepRefs(plan, next);
}

/** Removes one step by id. */
export function removeStep(plan: AgentPlan, id: string): AgentPlan {
  const next = clone(plan);
  next.steps = withoutDeps(
    next.steps.filter((s) => s.id !== id),
    new Set([id]),
  );
  return keepStepRefs(plan, next);
}

/** Keeps the first `keep` steps (at least one); the rest are removed. */
export function trimSteps(plan: AgentPlan, keep: number): AgentPlan {
  const next = clone(plan);
  const n = Math.max(1, Math.min(next.steps.length, Math.floor(keep)));
  const removed = new Set(next.steps.slice(n).map((s) => s.id));
  next.steps = withoutDeps(next.steps.slice(0, n), removed);
  return keepStepRefs(plan, next);
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
