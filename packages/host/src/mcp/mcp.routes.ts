import type { McpServerView } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import type { DomainRegistrar, HostContext } from '../context';
import { typedRoutes } from '../http/route-types';
import type { McpToolSource } from './mcp-source';
import { effectOf, qualifiedName } from './mcp-tool';

/**
 * HTTP surface of the MCP domain (services in `mcp.domain.ts`): `GET /api/mcp/servers` and
 * `POST /api/mcp/servers/{name}/reconnect`.
 */

const serverView = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    transport: { type: 'string', enum: ['stdio', 'http'] },
    state: { type: 'string', enum: ['idle', 'connecting', 'ready', 'error', 'closed'] },
    error: { type: 'string' },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, qualifiedName: { type: 'string' }, description: { type: 'string' }, effect: { type: 'string' } },
      },
    },
  },
} as const;

function view(s: Awaited<ReturnType<McpToolSource['servers']>>[number]): McpServerView {
  return {
    name: s.name,
    transport: s.transport,
    state: s.state,
    ...(s.error ? { error: s.error } : {}),
    tools: s.tools.map((t) => ({ name: t.name, qualifiedName: qualifiedName(s.name, t.name), description: t.description ?? '', effect: effectOf(t.annotations) })),
  };
}

export const registerMcp: DomainRegistrar = (ctx: HostContext, app: FastifyInstance) => {
  const { source } = ctx.mcp;
  const tags = ['mcp'];
  app.get(
    '/api/mcp/servers',
    { schema: { summary: 'Configured MCP servers: transport, connection state, error and tools', tags, response: { 200: { type: 'array', items: serverView } } } },
    async (req) => (await source.servers(req.owner)).map(view),
  );
  typedRoutes(app).post(
    '/api/mcp/servers/:name/reconnect',
    {
      schema: {
        summary: 'Reconnect one MCP server now (skips the back-off after a failure)',
        tags,
        params: { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', maxLength: 64 } } } as const,
        response: { 200: serverView },
      },
    },
    async (req) => view(await source.reconnect(req.owner, req.params.name)),
  );
};
