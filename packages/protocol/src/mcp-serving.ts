import type { Problem } from './errors';
import { PERMISSION_MODES, type PermissionMode } from './plan';

/**
 * Published workflows served over MCP (the host's `/mcp` endpoint): the per-workflow setting and
 * the tool names clients see. Pure.
 */

/** Whether a workflow is served over MCP, and the permission mode its calls run under. */
export interface WorkflowMcp {
  /** Serve the published version as a tool `wf_<slug>`; default false. */
  enabled: boolean;
  /** The mode calls run under (default `ask`: write tools wait for approval in the inbox). */
  permissionMode: PermissionMode;
}

/** `GET /api/mcp/client`: how an MCP client that spawns a command starts `fengyu mcp` for this host. */
export interface McpClientLaunch {
  /** The `command`, `args` and `env` an MCP client's stdio server entry needs. */
  stdio: {
    /** An absolute program path (the host's own node) or, for an installed `fengyu`, the bare command. */
    command: string;
    /** The entry script by absolute path, then `mcp`. */
    args: string[];
    /** `FENGYU_HOME`: the bridge talks to the running host of this home. */
    env: Record<string, string>;
  };
}

/** The setting of a workflow that never set one. */
export const MCP_OFF: WorkflowMcp = { enabled: false, permissionMode: 'ask' };

/** The setting in `value`, or every problem with it (field `mcp…`, code `workflow_mcp_invalid`). */
export function parseWorkflowMcp(value: unknown): { ok: true; mcp: WorkflowMcp } | { ok: false; problems: Problem[] } {
  const bad = (field: string, reason: string): Problem => ({ code: 'workflow_mcp_invalid', field, params: { field, reason } });
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, problems: [bad('mcp', 'an object {enabled, permissionMode?}')] };
  const v = value as Record<string, unknown>;
  const problems: Problem[] = [];
  for (const k of Object.keys(v)) if (k !== 'enabled' && k !== 'permissionMode') problems.push(bad(`mcp.${k}`, 'not a known setting'));
  if (typeof v.enabled !== 'boolean') problems.push(bad('mcp.enabled', 'true or false'));
  if (v.permissionMode !== undefined && !PERMISSION_MODES.includes(v.permissionMode as PermissionMode)) problems.push(bad('mcp.permissionMode', PERMISSION_MODES.join(', ')));
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, mcp: { enabled: v.enabled as boolean, permissionMode: (v.permissionMode as PermissionMode | undefined) ?? 'ask' } };
}

/** The slug of a workflow name: lowercase ASCII letters, digits and `_`, at most 40 characters. */
export function mcpSlug(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase()
    .slice(0, 40)
    .replace(/_+$/, '');
}

/**
 * Unique tool names for workflows, in the given order: `wf_<slug of the name>`; a name with no
 * ASCII letters or digits uses the workflow id; a taken name gets `_2`, `_3`…
 */
export function mcpToolNames(workflows: ReadonlyArray<{ id: string; name: string }>): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  for (const w of workflows) {
    const base = `wf_${mcpSlug(w.name) || w.id.toLowerCase()}`;
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    taken.add(name);
    out.set(w.id, name);
  }
  return out;
}
