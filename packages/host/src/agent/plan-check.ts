import { type AgentPlan, FengYuError, type PlanStep, type Problem, validatePlan } from '@fengyu/protocol';
import type { CatalogSnapshot } from '../tools/catalog';
import type { ResolvedConfig, RunSecrets } from './run-types';

/** What a plan is checked against besides its tools: the run's inputs and mode, and a caller's own step check. */
export type PlanCheckConfig = Pick<ResolvedConfig, 'inputNames' | 'fileInputNames' | 'readOnly'>;

/** What a validated plan was checked against (`PlanChecker.check` compares it before checking again). */
interface CheckedAgainst {
  catalog: CatalogSnapshot;
  extra: ((step: PlanStep) => Problem[]) | undefined;
  /** The config's fields and the owner's secret names, as text. */
  rest: string;
}

/**
 * Validates plans (`validatePlan` against a catalog snapshot, the owner's secret names and the run's
 * inputs) and throws `invalid_plan` with every problem. Validation is a pure function of those: a
 * plan this checker returned, checked again unchanged against the same snapshot, step check, config
 * and secret names (a plan gate's approval of the plan as drafted), is returned as it is without
 * walking its steps again. Any difference (an edited plan, a secret deleted meanwhile) checks it anew.
 */
export class PlanChecker {
  private readonly checked = new WeakMap<object, CheckedAgainst>();

  constructor(private readonly secrets: RunSecrets | undefined) {}

  check(plan: unknown, catalog: CatalogSnapshot, cfg: PlanCheckConfig, extra: ((step: PlanStep) => Problem[]) | undefined, owner: string): AgentPlan {
    const secretNames = this.secrets?.view(owner).names ?? new Set<string>();
    const rest = JSON.stringify([cfg.inputNames, cfg.fileInputNames, cfg.readOnly, [...secretNames].sort()]);
    const before = plan && typeof plan === 'object' ? this.checked.get(plan) : undefined;
    if (before && before.catalog === catalog && before.extra === extra && before.rest === rest) return plan as AgentPlan;
    const result = validatePlan(plan, {
      tool: (name) => catalog.get(name),
      secretNames,
      inputNames: new Set(cfg.inputNames),
      fileInputNames: new Set([...cfg.fileInputNames, ...cfg.inputNames]),
      readOnly: cfg.readOnly,
      extraStepCheck: extra ? (s) => extra(s) : undefined,
    });
    if (!result.ok) throw new FengYuError('invalid_plan', { count: result.problems.length }, result.problems);
    this.checked.set(result.plan, { catalog, extra, rest });
    return result.plan;
  }
}
