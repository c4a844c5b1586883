import { hash } from 'node:crypto';
import { type AgentPlan, FengYuError, localize, type PlanStep, REDACTED, redactSecrets, sealPlanSecretLiterals, secretFields } from '@fengyu/protocol';
import { type NewEvent, presetJson } from '../events/event-log';
import type { CatalogSnapshot } from '../tools/catalog';

/** How a run's plan, step identity and errors are written into events and rows. */

/**
 * A plan as its run row stores it: a write-only argument's value typed into the plan is sealed
 * (the marker), references (`{{secrets.SMTP}}`) kept. The running run keeps the value in memory;
 * a run that continues from its row (after a plan review, a stop) runs that step without it.
 */
export function planRowText(plan: AgentPlan, catalog: CatalogSnapshot): string {
  return JSON.stringify(sealPlanSecretLiterals(plan, (tool) => catalog.get(tool)?.inputSchema));
}

/** The plan as events and the API show it: secret tool arguments replaced. */
export function redactPlan(plan: AgentPlan, catalog: CatalogSnapshot): AgentPlan {
  return { ...plan, steps: plan.steps.map((s) => redactStep(s, catalog)) };
}

/** A step as shown (loop bodies included): the same step object when none of its arguments is secret. */
function redactStep(s: PlanStep, catalog: CatalogSnapshot): PlanStep {
  let next = s;
  if (s.tool && s.arguments) {
    const args = redactSecrets(s.arguments, catalog.get(s.tool)?.inputSchema);
    if (args !== s.arguments) next = { ...next, arguments: args };
  }
  if (Array.isArray(s.steps)) {
    const body = s.steps.map((b) => redactStep(b, catalog));
    if (body.some((b, i) => b !== s.steps?.[i])) next = { ...next, steps: body };
  }
  return next;
}

/**
 * A plan's `plan_ready` event. When nothing in it is redacted (every step shown is the plan's own),
 * its payload is `{"plan":…}` around `planJson`, the plan's text as its row stores it, instead of
 * serializing the same plan again; `JSON.stringify({ plan })` makes the same bytes.
 */
export function planReadyEvent(plan: AgentPlan, catalog: CatalogSnapshot, planJson: string | null): NewEvent {
  const shown = redactPlan(plan, catalog);
  const event: NewEvent = { type: 'plan_ready', plan: shown };
  if (planJson !== null && shown.steps.every((s, i) => s === plan.steps[i])) presetJson.set(event, `{"plan":${planJson}}`);
  return event;
}

/** An edited plan sent back from a review carries `[redacted]` where a secret was: keep the original. */
export function restoreSecrets(edited: AgentPlan, current: AgentPlan | undefined, catalog: CatalogSnapshot): AgentPlan {
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
  // the one-shot digest: the same SHA-256 hex as a Hash object's, without making one per step
  // control-flow steps add what they decide on (cases, items, body); other steps keep their digest
  if (step.kind || step.cases || step.steps) return hash('sha256', JSON.stringify([step.tool ?? null, step.arguments ?? null, step.instruction ?? null, step.kind ?? null, step.cases ?? null, step.items ?? null, step.steps ?? null, step.maxItems ?? null]), 'hex');
  return hash('sha256', JSON.stringify([step.tool ?? null, step.arguments ?? null, step.instruction ?? null]), 'hex');
}

export function errorText(err: unknown): string {
  if (err instanceof FengYuError) {
    const base = localize(err.code, err.params);
    const problems = problemTexts(err);
    return problems.length ? `${base} ${problems.join('; ')}` : base;
  }
  return err instanceof Error ? err.message : String(err);
}

export function problemTexts(err: unknown): string[] {
  const details = (err as { details?: unknown }).details;
  if (!Array.isArray(details)) return [];
  return details.map((p: { code: string; params?: Record<string, unknown>; message?: string }) => p.message ?? localize(p.code, p.params ?? {}));
}

/**
 * The problems as the planner's repair round shows them to the model: each with its stable code
 * first (`[condition_operator_unknown] Step "check": …`), so the model can tell what to change.
 */
export function problemLines(err: unknown): string[] {
  const details = (err as { details?: unknown }).details;
  if (!Array.isArray(details)) return [];
  return details.map((p: { code: string; params?: Record<string, unknown>; message?: string; field?: string }) => `[${p.code}]${p.field ? ` (${p.field})` : ''} ${p.message ?? localize(p.code, p.params ?? {})}`);
}

/** The promise, with a handler attached (a caller that does not wait for it leaves no unhandled rejection). */
export function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}
