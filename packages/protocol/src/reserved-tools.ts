import { WORKFLOW_TOOL_PREFIX } from './workflow';

/**
 * The names of the built-in tool families. A plugin's or an MCP server's tool may not take one:
 * it would stand in for a built-in when the built-in is unavailable, and rules written for a
 * family (`Tool(web_*)`, `Tool(task_*)`) would cover it. The host's own built-in tools are all
 * named inside this set (a test walks the real catalog), so this is the one list to extend.
 */
export const RESERVED_TOOL_PREFIXES: readonly string[] = [WORKFLOW_TOOL_PREFIX, 'task_', 'web_', 'browser_', 'memory_'];
/** Single built-in tool names reserved whole (no family prefix). */
export const RESERVED_TOOL_NAMES: readonly string[] = ['execute_command', 'run_current_flow'];

/** The built-in family a name belongs to (`web_*`, `execute_command`), or undefined. Letter case is ignored. */
export function reservedToolFamily(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (RESERVED_TOOL_NAMES.includes(lower)) return lower;
  const prefix = RESERVED_TOOL_PREFIXES.find((p) => lower.startsWith(p));
  return prefix === undefined ? undefined : `${prefix}*`;
}
