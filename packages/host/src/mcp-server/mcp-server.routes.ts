import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { FengYuError, localize, type McpClientLaunch, pickLocale } from '@fengyu/protocol';
import type { DomainRegistrar } from '../context';
import { VERSION } from '../http/version';
import { findEntryScript, stdioLaunch } from './client-launch';
import { InvalidArguments, McpServing } from './mcp-serving.service';

/**
 * `/mcp`: the owner's published workflows served over MCP (streamable HTTP, the official SDK's
 * server, stateless: each POST is answered on its own, as JSON). The host token authenticates
 * (`X-FengYu-Token`, or `Authorization: Bearer` on this route), and the front door's Host and
 * Origin rules apply as everywhere.
 */
export const registerMcpServer: DomainRegistrar = (ctx, app) => {
  const serving = new McpServing({
    workflows: ctx.workflows.service,
    runner: ctx.workflows.runner,
    agent: ctx.agent,
    runs: ctx.runs,
    patienceMs: ctx.config.mcpCallPatienceMs,
    uiUrl: () => {
      const address = app.server.address();
      return `http://127.0.0.1:${address && typeof address === 'object' ? address.port : ctx.config.port}`;
    },
  });
  const schema = { summary: 'MCP (streamable HTTP): the published workflows served as tools', tags: ['mcp'] };

  app.post('/mcp', { config: { bearerAuth: true }, schema }, async (req, reply) => {
    const owner = req.owner;
    const locale = pickLocale(req.headers['accept-language']);
    const server = new Server({ name: 'fengyu', version: VERSION }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await serving.list(owner) }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const args = request.params.arguments ?? {};
      try {
        const result = await serving.call(owner, request.params.name, args, locale);
        if (!result) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
        return result;
      } catch (err) {
        if (err instanceof InvalidArguments) throw new McpError(ErrorCode.InvalidParams, err.message);
        if (err instanceof FengYuError) return { content: [{ type: 'text' as const, text: localize(err.code, err.params, locale) }], isError: true };
        throw err;
      }
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });

  // What a client that spawns a command copies: this host's node and entry script, by absolute path.
  const launch = stdioLaunch(ctx.config.home, findEntryScript(import.meta.dirname), process.execPath);
  app.get('/api/mcp/client', { schema: { summary: 'How an MCP client starts `fengyu mcp` (stdio) for this host', tags: ['mcp'] } }, async (): Promise<McpClientLaunch> => ({ stdio: launch }));

  // Stateless: no server-initiated stream and no session to end.
  const notAllowed = { summary: 'Not used by this stateless MCP server (405)', tags: ['mcp'] };
  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      method,
      url: '/mcp',
      config: { bearerAuth: true },
      schema: notAllowed,
      handler: async (_req, reply) => {
        reply.code(405).header('allow', 'POST');
        return { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null };
      },
    });
};
