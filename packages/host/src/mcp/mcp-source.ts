import { FengYuError } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { SourceStatus, Tool, ToolContext, ToolSource } from '../tools/tool';
import { fingerprint, type McpServersSettings, type StdioServerConfig } from './mcp.config';
import { type ConnectionDeps, type ConnectionSnapshot, McpConnection, type StdioLaunch } from './mcp-connection';
import { toolFacts } from './mcp-tool';

/**
 * The MCP tool source: the owner's configured servers (settings `mcpServers`), each a lazily
 * opened connection; their tools appear in catalog snapshots as `<server>__<tool>`. A server
 * that fails is reported by `status()` and contributes no tools; it never fails a snapshot.
 */

export interface McpSourceDeps extends Omit<ConnectionDeps, 'logger' | 'launchStdio'> {
  logger: Logger;
  /** How `owner`'s stdio server `server` is started (its sandbox); may throw to refuse it. */
  launchStdio?: (owner: string, server: string, config: StdioServerConfig) => Promise<StdioLaunch>;
  /** The owner's `mcpServers` section. */
  servers: (owner: string) => Promise<McpServersSettings>;
  /** Whether the owner's `mcpServers` section names any server, when the settings are already read; else undefined. */
  hasServersNow?: (owner: string) => boolean | undefined;
  /**
   * Reads the owner's header and env values again when another host of a shared database changed
   * them; answers a stamp that moves whenever they were read again (`servers` then reveals the new ones).
   */
  fresh?: (owner: string) => Promise<number>;
}

interface Entry {
  owner: string;
  key: string;
  conn: McpConnection;
}

export class McpToolSource implements ToolSource {
  readonly kind = 'mcp' as const;
  private readonly entries = new Map<string, Entry>();
  /** Replaced connections still finishing their calls in flight (closed with the source). */
  private readonly retiring = new Set<McpConnection>();
  /** owner → the `fresh` stamp its connections were last matched against. */
  private readonly synced = new Map<string, number>();

  constructor(private readonly deps: McpSourceDeps) {}

  private key(owner: string, server: string): string {
    return `${owner}\u0000${server}`;
  }

  /**
   * Makes the connections match `servers` for `owner`: removed or changed servers are retired
   * (closed once their calls in flight end); new ones are created idle (they connect on first
   * use). Returns the changed-and-was-used ones.
   */
  sync(owner: string, servers: McpServersSettings): McpConnection[] {
    const reopened: McpConnection[] = [];
    for (const [k, e] of this.entries) {
      if (e.owner !== owner) continue;
      const next = servers[e.conn.server];
      if (next && fingerprint(next) === fingerprint(e.conn.config)) continue;
      this.entries.delete(k);
      const wasUsed = e.conn.state !== 'idle';
      this.retiring.add(e.conn);
      void e.conn.retire().finally(() => this.retiring.delete(e.conn));
      if (next && wasUsed) reopened.push(this.add(owner, e.conn.server, servers));
    }
    for (const name of Object.keys(servers)) if (!this.entries.has(this.key(owner, name))) this.add(owner, name, servers);
    return reopened;
  }

  private add(owner: string, server: string, servers: McpServersSettings): McpConnection {
    const config = servers[server];
    if (!config) throw new FengYuError('mcp_server_not_found', { server });
    const { launchStdio, ...deps } = this.deps;
    const conn = new McpConnection(server, config, { ...deps, ...(launchStdio ? { launchStdio: (c: StdioServerConfig) => launchStdio(owner, server, c) } : {}) });
    this.entries.set(this.key(owner, server), { owner, key: this.key(owner, server), conn });
    return conn;
  }

  /** Applies a settings change: closes what changed and reconnects, in the background, what was in use. */
  applySettings(owner: string, servers: McpServersSettings): void {
    for (const conn of this.sync(owner, servers)) conn.ensure().catch(() => {});
  }

  /** Matches the owner's connections to the values another host changed, when they changed since the last match. */
  private async follow(owner: string): Promise<void> {
    const stamp = await this.deps.fresh?.(owner);
    if (stamp === undefined || this.synced.get(owner) === stamp) return;
    this.sync(owner, await this.deps.servers(owner));
    this.synced.set(owner, stamp);
  }

  private async connections(owner: string): Promise<McpConnection[]> {
    const stamp = await this.deps.fresh?.(owner);
    this.sync(owner, await this.deps.servers(owner));
    if (stamp !== undefined) this.synced.set(owner, stamp);
    return [...this.entries.values()].filter((e) => e.owner === owner).map((e) => e.conn);
  }

  async list(owner: string): Promise<Tool[]> {
    const conns = await this.connections(owner);
    await Promise.all(conns.map((c) => c.ensure().catch(() => {})));
    return conns.filter((c) => c.state === 'ready').flatMap((c) => c.tools.map((def) => this.tool(owner, c, def.name)));
  }

  /** An owner with no server configured lists no tools at once (a server just removed is closed, as `list` does). */
  listNow(owner: string): readonly Tool[] | undefined {
    if (this.deps.hasServersNow?.(owner) !== false) return undefined;
    this.sync(owner, {});
    return [];
  }

  /** Per-server detail for `GET /api/mcp/servers` (connects lazily, like a catalog snapshot). */
  async servers(owner: string): Promise<ConnectionSnapshot[]> {
    const conns = await this.connections(owner);
    await Promise.all(conns.map((c) => c.ensure().catch(() => {})));
    return conns.map((c) => c.snapshot());
  }

  /** Drops a failed server's back-off and connects again. */
  async reconnect(owner: string, server: string): Promise<ConnectionSnapshot> {
    const conns = await this.connections(owner);
    const conn = conns.find((c) => c.server === server);
    if (!conn) throw new FengYuError('mcp_server_not_found', { server });
    conn.resetBackoff();
    await conn.ensure().catch(() => {});
    return conn.snapshot();
  }

  async status(): Promise<SourceStatus[]> {
    return [...this.entries.values()].map(({ conn }) => ({
      source: 'mcp' as const,
      name: conn.server,
      state: conn.state === 'ready' ? 'ok' : conn.state === 'error' ? 'error' : 'connecting',
      ...(conn.error ? { error: conn.error } : {}),
      toolCount: conn.tools.length,
    }));
  }

  private tool(owner: string, conn: McpConnection, mcpName: string): Tool {
    const def = conn.tools.find((t) => t.name === mcpName);
    const facts = toolFacts(conn.server, def ?? { name: mcpName, inputSchema: { type: 'object' } });
    const server = conn.server;
    return {
      ...facts,
      source: 'mcp',
      available: true,
      origin: server,
      timeoutSeconds: conn.timeoutSeconds,
      // Looks the connection up at call time: a settings change may have replaced it since the snapshot.
      // A value another host changed replaces the connection first (its calls in flight finish on the old one).
      invoke: async (args: Record<string, unknown>, ctx: ToolContext) => {
        await this.follow(owner);
        const current = this.entries.get(this.key(owner, server))?.conn;
        if (!current) throw new FengYuError('mcp_server_not_found', { server });
        return current.call(mcpName, facts.name, args, ctx.signal, ctx.progress);
      },
    };
  }

  async close(): Promise<void> {
    const all = [...this.entries.values()].map((e) => e.conn).concat([...this.retiring]);
    this.entries.clear();
    this.retiring.clear();
    await Promise.all(all.map((conn) => conn.close()));
  }
}
