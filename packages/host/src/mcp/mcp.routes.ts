import type { FastifyInstance } from 'fastify';
import type { DomainRegistrar, HostContext } from '../context';
import { registerWebTools } from '../tools/builtin/web-tools';
import { McpServersSettings, redactServers, registerMcpErrors, restoreRedacted } from './mcp.config';
import { McpToolSource } from './mcp-source';
import { effectOf, qualifiedName } from './mcp-tool';

/**
 * The MCP domain: the `mcpServers` settings section, the MCP tool source, and
 * `GET /api/mcp/servers` / `POST /api/mcp/servers/{name}/reconnect`. It also registers the web
 * built-ins (`web_fetch`, `web_search` and their settings sections), which share this domain's
 * outbound-network concerns.
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

function view(s: Awaited<ReturnType<McpToolSource['servers']>>[number]) {
  return {
    name: s.name,
    transport: s.transport,
    state: s.state,
    ...(s.error ? { error: s.error } : {}),
    tools: s.tools.map((t) => ({ name: t.name, qualifiedName: qualifiedName(s.name, t.name), description: t.description ?? '', effect: effectOf(t.annotations) })),
  };
}

export function createMcpSource(ctx: HostContext): McpToolSource {
  return new McpToolSource({
    logger: ctx.logger,
    now: () => ctx.clock.now(),
    servers: (owner) => ctx.settings.section<McpServersSettings>(owner, 'mcpServers'),
  });
}

export const registerMcp: DomainRegistrar = (ctx: HostContext, app: FastifyInstance) => {
  registerMcpErrors();
  registerWebTools(ctx);
  ctx.settings.registerSection<McpServersSettings>('mcpServers', {
    schema: McpServersSettings,
    defaultValue: {},
    redact: redactServers,
    prepare: (next, prev) => restoreRedacted(next, prev ?? {}),
  });
  const source = createMcpSource(ctx);
  ctx.catalog.register(source);
  ctx.settings.onChange((owner, doc, changed) => {
    if (changed && !changed.includes('mcpServers')) return;
    source.applySettings(owner, (doc.mcpServers ?? {}) as McpServersSettings);
  });
  ctx.onClose(() => source.close());

  const tags = ['mcp'];
  app.get(
    '/api/mcp/servers',
    { schema: { summary: 'Configured MCP servers: transport, connection state, error and tools', tags, response: { 200: { type: 'array', items: serverView } } } },
    async (req) => (await source.servers(req.owner)).map(view),
  );
  app.post(
    '/api/mcp/servers/:name/reconnect',
    {
      schema: {
        summary: 'Reconnect one MCP server now (skips the back-off after a failure)',
        tags,
        params: { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', maxLength: 64 } } },
        response: { 200: serverView },
      },
    },
    async (req) => view(await source.reconnect(req.owner, (req.params as { name: string }).name)),
  );
};
