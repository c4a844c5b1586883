import { canonicalJson, isFengYuError, type Problem, REDACTED } from '@fengyu/protocol';
import type { OwnerIsolation } from '../process/owner-commands';
import { mcpIsolationMode } from './mcp-launch';
import type { SecretStore } from '../models/secret-store';
import type { SectionSpec } from '../settings/settings.store';
import { isStdio, type McpServerConfig, McpServersSettings, redactServers, reservedServerNames, restoreRedacted } from './mcp.config';

/**
 * MCP header values (`mcpServers.<n>.headers`) and stdio env values (`mcpServers.<n>.env`) are
 * stored like backend API keys: the values go to the vault (sealed), the settings document
 * keeps only the marker, the API shows only the marker, and sending the marker back keeps the
 * stored value. The MCP source sees the revealed values.
 */

function secretMapOf(c: McpServerConfig): ['env' | 'headers', Record<string, string>] {
  return isStdio(c) ? ['env', c.env] : ['headers', c.headers];
}

const keyOf = (server: string, kind: string, name: string) => `${server}/${kind}/${name}`;

/** The servers with every marker replaced by the stored value (values not yet moved stay as they are). */
export function revealServers(secrets: SecretStore, owner: string, servers: McpServersSettings): McpServersSettings {
  const out: McpServersSettings = {};
  for (const [server, c] of Object.entries(servers ?? {})) {
    const [kind, map] = secretMapOf(c);
    const revealed = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, v === REDACTED ? (secrets.get(owner, keyOf(server, kind, k)) ?? v) : v]));
    out[server] = { ...c, [kind]: revealed } as McpServerConfig;
  }
  return out;
}

/** Moves every value into the vault (replacing the owner's MCP secrets) and returns the servers with markers. */
export async function sealServers(secrets: SecretStore, owner: string, servers: McpServersSettings): Promise<McpServersSettings> {
  const keys: Record<string, string> = {};
  const out: McpServersSettings = {};
  for (const [server, c] of Object.entries(servers)) {
    const [kind, map] = secretMapOf(c);
    for (const [k, v] of Object.entries(map)) if (v !== REDACTED) keys[keyOf(server, kind, k)] = v;
    out[server] = { ...c, [kind]: Object.fromEntries(Object.keys(map).map((k) => [k, REDACTED])) } as McpServerConfig;
  }
  await secrets.replace(owner, keys);
  return out;
}

/**
 * A stdio server that another owner adds or changes must be startable in that owner's sandbox:
 * refused at save (`mcp_isolation_unavailable`) where it is not, so the owner learns it at once.
 * An unchanged server does not block saving (it is refused again when it would start).
 */
async function isolationProblems(isolation: OwnerIsolation | undefined, owner: string, servers: McpServersSettings, prev: McpServersSettings | undefined): Promise<Problem[]> {
  if (!isolation || owner === isolation.primaryOwner) return [];
  const problems: Problem[] = [];
  for (const [name, c] of Object.entries(servers)) {
    const old = prev?.[name];
    if (!isStdio(c) || (old && isStdio(old) && old.command === c.command && canonicalJson(old.args) === canonicalJson(c.args))) continue;
    try {
      await mcpIsolationMode(isolation, owner, name);
    } catch (e) {
      if (!isFengYuError(e)) throw e;
      problems.push({ code: e.code, field: `mcpServers.${name}`, params: e.params });
    }
  }
  return problems;
}

/** Where a server's stored values go: its URL, or the program it starts (command and arguments). */
function destinationOf(c: McpServerConfig): string {
  return isStdio(c) ? [c.command, ...(c.args ?? [])].join(' ') : c.url;
}

/**
 * A stored value never follows a new destination: the marker keeps a header value only while
 * `url` is unchanged, and an env value only while `command` and `args` are (a changed program
 * would receive it, as a changed address would).
 */
export function followProblems(servers: McpServersSettings, prev: McpServersSettings | undefined): Problem[] {
  return Object.entries(servers).flatMap(([name, c]) => {
    const old = prev?.[name];
    if (!old || isStdio(old) !== isStdio(c)) return [];
    const same = isStdio(c) && isStdio(old) ? old.command === c.command && canonicalJson(old.args) === canonicalJson(c.args) : !isStdio(c) && !isStdio(old) && old.url === c.url;
    if (same) return [];
    const [from, to] = [destinationOf(old), destinationOf(c)];
    const [kind, values] = secretMapOf(c);
    return Object.entries(values)
      .filter(([, v]) => v === REDACTED)
      .map(([key]) => ({ code: 'secret_reentry_required', field: `mcpServers.${name}.${kind}.${key}`, params: { name, secret: `${kind}.${key}`, from, to } }));
  });
}

export function mcpServersSection(secrets: SecretStore, isolation?: OwnerIsolation): SectionSpec<McpServersSettings> {
  return {
    schema: McpServersSettings,
    defaultValue: {},
    redact: redactServers,
    validate: async (servers, _doc, ctx) => [
      ...reservedServerNames(servers),
      ...followProblems(servers, ctx.prev.mcpServers as McpServersSettings | undefined),
      ...(await isolationProblems(isolation, ctx.owner, servers, ctx.prev.mcpServers as McpServersSettings | undefined)),
    ],
    // a marker keeps the value the database holds now (another host may have changed it), not an older copy
    prepare: async (next, prev, owner) => {
      await secrets.fresh(owner);
      return sealServers(secrets, owner, restoreRedacted(next, revealServers(secrets, owner, prev ?? {})));
    },
  };
}
