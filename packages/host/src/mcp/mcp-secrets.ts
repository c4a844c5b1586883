import { REDACTED } from '@fengyu/protocol';
import type { SecretStore } from '../models/secret-store';
import type { SectionSpec } from '../settings/settings.store';
import { isStdio, type McpServerConfig, McpServersSettings, redactServers, reservedServerNames, restoreRedacted } from './mcp.config';

/**
 * MCP header values (`mcpServers.<n>.headers`) and stdio env values (`mcpServers.<n>.env`) are
 * stored like backend API keys: the values go to the 0600 secret store, the settings document
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

/** Moves every value into the store (replacing the owner's MCP secrets) and returns the servers with markers. */
export function sealServers(secrets: SecretStore, owner: string, servers: McpServersSettings): McpServersSettings {
  const keys: Record<string, string> = {};
  const out: McpServersSettings = {};
  for (const [server, c] of Object.entries(servers)) {
    const [kind, map] = secretMapOf(c);
    for (const [k, v] of Object.entries(map)) if (v !== REDACTED) keys[keyOf(server, kind, k)] = v;
    out[server] = { ...c, [kind]: Object.fromEntries(Object.keys(map).map((k) => [k, REDACTED])) } as McpServerConfig;
  }
  secrets.replace(owner, keys);
  return out;
}

export function mcpServersSection(secrets: SecretStore): SectionSpec<McpServersSettings> {
  return {
    schema: McpServersSettings,
    defaultValue: {},
    redact: redactServers,
    validate: reservedServerNames,
    prepare: (next, prev, owner) => sealServers(secrets, owner, restoreRedacted(next, revealServers(secrets, owner, prev ?? {}))),
  };
}
