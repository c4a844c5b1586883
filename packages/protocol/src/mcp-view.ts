import type { ToolEffect } from './catalog';

/** Configured MCP servers as the API answers them (the host and the UI share these shapes). */

/** A server connection's state: not opened yet, opening, serving its tools, failed (retried after a back-off), or closed. */
export type McpConnectionState = 'idle' | 'connecting' | 'ready' | 'error' | 'closed';

/** One configured MCP server: how it is reached, its connection state and its tools. */
export interface McpServerView {
  name: string;
  transport: 'stdio' | 'http';
  state: McpConnectionState;
  error?: string;
  /** `qualifiedName`: the tool's name in the catalog (server and tool joined). */
  tools: Array<{ name: string; qualifiedName: string; description: string; effect: ToolEffect }>;
}
