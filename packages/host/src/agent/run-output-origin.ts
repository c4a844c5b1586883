import { type AgentPlan, allSteps, type StepExecution } from '@fengyu/protocol';

/**
 * Which plugin may hand a run's owner a file outside the run's own folders: a file a plugin's
 * own step of that run reported writing (a `{ name, path }` in its result — the e-mail outbox's
 * `.eml` files). The path must also resolve inside that plugin's data folder (checked by the
 * route with `resolveInside`), so a step that merely names a path grants nothing else.
 */

/** Every `path` of a `{ name: string, path: string }` object in `value` (depth ≤ 8). */
export function reportedPaths(value: unknown, out = new Set<string>(), depth = 0): Set<string> {
  if (depth > 8 || value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    for (const v of value) reportedPaths(v, out, depth + 1);
    return out;
  }
  const o = value as Record<string, unknown>;
  if (typeof o.name === 'string' && typeof o.path === 'string') out.add(o.path);
  for (const v of Object.values(o)) reportedPaths(v, out, depth + 1);
  return out;
}

/** The plugin whose tool, in a done step of this run, reported writing `path`; else undefined. */
export function pluginReporting(plan: AgentPlan | undefined, executions: readonly StepExecution[], pluginOf: (tool: string) => string | undefined, path: string): string | undefined {
  const toolOf = new Map(allSteps(plan?.steps ?? []).map((s) => [s.id, (s as { tool?: string }).tool]));
  for (const e of executions) {
    if (e.status !== 'done') continue;
    const tool = toolOf.get(e.stepId);
    const plugin = tool ? pluginOf(tool) : undefined;
    if (plugin && reportedPaths(e.result).has(path)) return plugin;
  }
  return undefined;
}
