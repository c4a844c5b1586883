import type { CatalogEntry, JsonSchema, Locale, PermissionMode, ToolEffect, ToolSourceKind } from '@fengyu/protocol';
import type { AbortWatch } from './call-scope';

/**
 * The one Tool interface every source implements: built-ins, plugin aiTools, MCP server tools
 * and published workflows. The runner, model steps and chat call tools only through this.
 */

/** A file grant attached to a run: a host path a tool may read (or write). */
export interface FileGrant {
  /** The input name (`@file:<name>`) or shared-directory field the grant came from. */
  name: string;
  /** Absolute, real host path. */
  path: string;
  kind: 'file' | 'directory';
  access: 'read' | 'write' | 'read-write';
  /** FileRef id when the grant came from an upload. */
  fileId?: string;
}

/** Reports progress of a long call (forwarded as audit/progress events). */
export type ProgressFn = (progress: { message?: string; current?: number; total?: number }) => void;

export interface ToolContext {
  signal: AbortSignal;
  /**
   * The same cancellation as `signal`, told without one: a caller that only needs to know when
   * the call is aborted subscribes here (the runner makes `signal` only when a tool reads it).
   */
  abort?: AbortWatch;
  owner: string;
  runId?: string;
  stepId?: string;
  /** The chat conversation of a chat call (tools keeping per-conversation state key on it). */
  conversationId?: string;
  permissionMode: PermissionMode;
  /**
   * True when a human approved this very call (a step gate or a chat confirmation card), or the
   * mode needs no approval. A workflow tool carries it into its inner run ("the permissions
   * already granted to the outer call"), so approved calls do not fail on inner gates.
   */
  approved?: boolean;
  /** Grants of the run (uploads, native paths, shared directories). */
  grants: readonly FileGrant[];
  progress?: ProgressFn;
  /** Lets a tool emit nested `tool` events or audit records into the run's log. */
  emit?: (type: 'audit' | 'tool', payload: Record<string, unknown>) => void;
  /**
   * Asks the person behind this call (a chat's approval card, or the calling run's step gate): a
   * workflow tool's inner gates ask here instead of failing.
   */
  askApproval?: (reason: string, detail: { tool: string; arguments: unknown; effect: string }) => Promise<boolean>;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly effect: ToolEffect;
  readonly source: ToolSourceKind;
  /** Stable id: "builtin:web_fetch", "pluginId:toolName", "mcp:<server>:<tool>", "workflow:<id>". */
  readonly id: string;
  readonly schemaRevision: string;
  readonly idempotent: boolean;
  readonly available: boolean;
  /** Why the tool is unavailable, as a message code (e.g. `web_search_unconfigured`); absent when available. */
  readonly unavailableReason?: string;
  /** Plugin id / MCP server name, when the tool has one. */
  readonly origin?: string;
  /** The description in other languages (a plugin manifest's `i18n`), shown by `GET /api/agent/tools` in the caller's language; models read `description`. */
  readonly descriptions?: Partial<Record<Locale, string>>;
  readonly flowNode?: Record<string, unknown>;
  /** Per-call timeout in seconds (plugins clamp to [1,600]); undefined = source default. */
  readonly timeoutSeconds?: number;
  /**
   * Runs the tool. Resolves with the tool's result; rejects (preferably with a FengYuError such
   * as tool_failed / tool_timeout / tool_cancelled) on failure. Must honour `ctx.signal`.
   */
  invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

/** A source of tools, asked for its current tools whenever a catalog snapshot is built. */
export interface ToolSource {
  readonly kind: ToolSourceKind;
  /** Current tools for `owner`. Must not throw for a broken backend: report it via `status`. */
  list(owner: string): Promise<Tool[]>;
  /**
   * What `list` would answer, when that is at hand without a lookup or a wait (the owner's settings
   * already read, nothing to connect); else undefined and `list` is asked. Read afresh on each call.
   * An array answered here is never changed afterwards: another list is another array.
   */
  listNow?(owner: string): readonly Tool[] | undefined;
  /** Optional health of the source's backends (e.g. MCP servers that failed to start). */
  status?(): Promise<SourceStatus[]>;
}

export interface SourceStatus {
  source: ToolSourceKind;
  name: string;
  state: 'ok' | 'error' | 'connecting' | 'disabled';
  error?: string;
  toolCount?: number;
}

export function toCatalogEntry(t: Tool): CatalogEntry {
  return {
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
    ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
    effect: t.effect,
    source: t.source,
    id: t.id,
    schemaRevision: t.schemaRevision,
    idempotent: t.idempotent,
    available: t.available,
    ...(t.unavailableReason ? { unavailableReason: t.unavailableReason } : {}),
    ...(t.origin ? { origin: t.origin } : {}),
    ...(t.flowNode ? { flowNode: t.flowNode } : {}),
  };
}

/** A source of built-in tools that are the same for every owner and never change. */
export class FixedToolSource implements ToolSource {
  readonly kind = 'builtin' as const;
  constructor(private readonly tools: readonly Tool[]) {}
  async list(): Promise<Tool[]> {
    return [...this.tools];
  }
  listNow(): readonly Tool[] {
    return this.tools;
  }
}
