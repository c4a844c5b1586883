import { type PlanStep, type ResolveScope, resolveShellTemplate, resolveValue, SHELL_TEMPLATE_ARGUMENTS } from '@fengyu/protocol';

/**
 * A step's arguments with every reference resolved. Arguments that are shell source
 * (`execute_command.command`) are rendered as templates: each value becomes one quoted shell word
 * (docs/permissions.md, "Values in a command"); the guard then judges the rendered line.
 */
export function resolveArguments(step: PlanStep, scope: ResolveScope): Record<string, unknown> {
  const raw = step.arguments ?? {};
  const shell = new Set(SHELL_TEMPLATE_ARGUMENTS[step.tool ?? ''] ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    out[key] = shell.has(key) && typeof value === 'string' ? resolveShellTemplate(value, scope) : resolveValue(value, scope);
  }
  return out;
}
