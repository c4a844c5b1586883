import { canonicalJson, errorSpecOf, type Problem, REDACTED, registerErrors, reservedToolFamily } from '@fengyu/protocol';
import { z } from 'zod';

/**
 * The `mcpServers` settings section: `{"<name>": {command, args, env} | {url, headers}}`.
 * Names become the prefix of qualified tool names (`<server>__<tool>`), so they are restricted
 * to `[A-Za-z0-9_-]` and may not contain `__` (which would make the prefix ambiguous).
 * `timeoutSeconds` (1–600, default 120) is an optional per-server call timeout.
 */

export const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
export const DEFAULT_CALL_TIMEOUT_SECONDS = 120;
/** What GET /api/settings shows instead of env and header values (which may carry secrets): the one redaction marker. */
export { REDACTED };

const serverName = z
  .string()
  .min(1)
  .max(64)
  .regex(SERVER_NAME, 'server names may only contain letters, digits, "_" and "-"')
  .refine((n) => !n.includes('__'), 'server names may not contain "__" (it separates server and tool in qualified names)');

const timeoutSeconds = z.number().int().min(1).max(600).optional();
const stringMap = z.record(z.string().min(1), z.string());

export const StdioServerConfig = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: stringMap.default({}),
    timeoutSeconds,
  })
  .strict();

export const HttpServerConfig = z
  .object({
    url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http or https URL'),
    headers: stringMap.default({}),
    timeoutSeconds,
    /** Loopback, private, link-local and metadata addresses are refused unless this is true (as for web_fetch). */
    allowPrivateNetwork: z.boolean().optional(),
  })
  .strict();

export const McpServerConfig = z.union([StdioServerConfig, HttpServerConfig]);
export const McpServersSettings = z.record(serverName, McpServerConfig);

export type StdioServerConfig = z.infer<typeof StdioServerConfig>;
export type HttpServerConfig = z.infer<typeof HttpServerConfig>;
export type McpServerConfig = z.infer<typeof McpServerConfig>;
export type McpServersSettings = z.infer<typeof McpServersSettings>;

/**
 * A server's tools are named `<server>__<tool>`: a server name that puts them in a built-in
 * family (`web` → `web__…` is inside `web_*`) is refused, naming the server.
 */
export function reservedServerNames(servers: McpServersSettings): Problem[] {
  return Object.keys(servers).flatMap((name) => {
    const family = reservedToolFamily(`${name}__`);
    return family ? [{ code: 'mcp_server_name_reserved', field: `mcpServers.${name}`, params: { server: name, tool: `${name}__*`, family } }] : [];
  });
}

export function isStdio(c: McpServerConfig): c is StdioServerConfig {
  return 'command' in c;
}

export function transportOf(c: McpServerConfig): 'stdio' | 'http' {
  return isStdio(c) ? 'stdio' : 'http';
}

/** Identity of a configuration: a connection is replaced exactly when this changes. */
export function fingerprint(c: McpServerConfig): string {
  return canonicalJson(c);
}

function redactMap(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(m).map((k) => [k, REDACTED]));
}

export function redactServers(servers: McpServersSettings): unknown {
  return Object.fromEntries(
    Object.entries(servers).map(([name, c]) => [name, isStdio(c) ? { ...c, env: redactMap(c.env) } : { ...c, headers: redactMap(c.headers) }]),
  );
}

/** A client that PATCHes back a redacted value keeps the saved one. */
export function restoreRedacted(next: McpServersSettings, prev: McpServersSettings): McpServersSettings {
  const keep = (n: Record<string, string>, p: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(n).map(([k, v]) => [k, v === REDACTED && p?.[k] !== undefined ? p[k] : v])) as Record<string, string>;
  const out: McpServersSettings = {};
  for (const [name, c] of Object.entries(next)) {
    const old = prev[name];
    if (isStdio(c)) out[name] = { ...c, env: keep(c.env, old && isStdio(old) ? old.env : undefined) };
    else out[name] = { ...c, headers: keep(c.headers, old && !isStdio(old) ? old.headers : undefined) };
  }
  return out;
}

export function registerMcpErrors(): void {
  registerErrors({
    mcp_server_unavailable: errorSpecOf(502, true),
    mcp_server_not_found: errorSpecOf(404),
    mcp_isolation_unavailable: errorSpecOf(403),
  });
}
