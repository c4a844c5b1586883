import { mkdir } from 'node:fs/promises';
import { FengYuError, isFengYuError } from '@fengyu/protocol';
import { commandMode, type OwnerIsolation, ownerProgramSpec, scratchDir } from '../process/owner-commands';
import type { StdioServerConfig } from './mcp.config';
import type { StdioLaunch } from './mcp-connection';

/**
 * How an owner's MCP stdio server is started: the same owner sandbox as that owner's commands
 * and hooks (`process/owner-commands.ts`). The primary owner's servers run as configured (the
 * SDK adds only HOME, LOGNAME, PATH, SHELL, TERM and USER from the host's environment). Any
 * other owner's server runs in bubblewrap — FENGYU_HOME and the user's home empty, own PID
 * namespace, the allow-listed environment plus the server's configured `env`, working and home
 * directory the owner's scratch directory — or, without bubblewrap, is refused with
 * `mcp_isolation_unavailable` unless the primary owner set `commands.allowUnsandboxedOwners`.
 */

export interface McpLaunchDeps {
  home: string;
  hostEnv: Readonly<Record<string, string | undefined>>;
  isolation: OwnerIsolation;
}

/** Throws `mcp_isolation_unavailable` when `owner`'s stdio servers cannot be isolated here. */
export async function mcpIsolationMode(isolation: OwnerIsolation, owner: string, server: string) {
  try {
    return await commandMode(isolation, owner);
  } catch (e) {
    if (isFengYuError(e) && e.code === 'command_isolation_unavailable') throw new FengYuError('mcp_isolation_unavailable', { ...e.params, server }, undefined, { cause: e });
    throw e;
  }
}

export async function launchMcpStdio(deps: McpLaunchDeps, owner: string, server: string, config: StdioServerConfig): Promise<StdioLaunch> {
  const mode = await mcpIsolationMode(deps.isolation, owner, server);
  if (mode === 'host') return { command: config.command, args: config.args, env: config.env };
  const scratch = scratchDir(deps.home, { owner });
  await mkdir(scratch, { recursive: true });
  const spec = ownerProgramSpec({ mode, isolation: deps.isolation, home: deps.home, hostEnv: deps.hostEnv, command: config.command, args: config.args, cwd: scratch, scratch, grants: [], extraEnv: config.env });
  return { command: spec.command, args: [...spec.args], env: spec.env, cwd: spec.cwd };
}
