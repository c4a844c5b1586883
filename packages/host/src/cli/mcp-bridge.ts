import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { VERSION } from '../http/version';
import { connectHost } from './host-client';

/**
 * `fengyu mcp`: a stdio MCP server for clients that spawn a command (Claude Desktop, Cursor…),
 * bridged to the host's `/mcp` endpoint: the running host of the same FENGYU_HOME, or one started
 * in this process. stdout carries only the protocol: logs go to stderr.
 */
export async function mcpBridgeCommand(opts: { home?: string }): Promise<number> {
  const host = await connectHost(opts.home, { logger: pino({ level: 'warn' }, pino.destination(2)) });
  const upstream = new Client({ name: 'fengyu-mcp-bridge', version: VERSION });
  await upstream.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: { 'x-fengyu-token': host.token } } }));
  const server = new Server({ name: 'fengyu', version: VERSION }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async (req) => upstream.listTools(req.params));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => upstream.callTool(req.params, undefined, { signal: extra.signal, timeout: 24 * 3600_000 }));
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  await closed;
  await upstream.close();
  await host.close();
  return 0;
}
