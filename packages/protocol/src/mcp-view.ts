import type { ToolEffect } from './catalog';

/** Configured MCP servers as the API answers them (the host and the UI share these shapes). */

/** A server connection's state: not opened yet, opening, serving its tools, failed (retried after a back-off), or closed. */
export type McpConnectionState = 'idle' | 'connecting' | 'ready' | 'error' | 'closed';

/** One configured MCP server: how it is reached, its connection state and its tools. */
export interface McpServerView {
  /** The server's configured name. */
  name: string;
  /** `stdio` for a spawned command, `http` for a URL. */
  transport: 'stdio' | 'http';
  /** Its connection state. */
  state: McpConnectionState;
  /** The last connection error, in words, when there was one. */
  error?: string;
  /** The tools it serves, as last listed. */
  tools: Array<{
    /** The tool's name on the server. */
    name: string;
    /** The tool's name in the catalog: `<server>__<tool>`. */
    qualifiedName: string;
    /** The server's description of the tool (empty when it gave none). */
    description: string;
    /** From the server's annotations: `read` (readOnlyHint), else `external` (openWorldHint), else `write`. */
    effect: ToolEffect;
  }>;
}
