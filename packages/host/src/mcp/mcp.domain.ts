import type { CoreServices } from '../services';
import { registerWebTools } from '../tools/builtin/web-tools';
import { McpServersSettings, redactServers, registerMcpErrors, restoreRedacted } from './mcp.config';
import { McpToolSource } from './mcp-source';

/**
 * The MCP domain's services: the `mcpServers` settings section and the MCP tool source
 * (reconnected when the section changes). It also registers the web built-ins (`web_fetch`,
 * `web_search` and their settings sections), which share this domain's outbound-network concerns.
 */

export interface McpDomain {
  source: McpToolSource;
}

export function createMcpSource(core: Pick<CoreServices, 'logger' | 'clock' | 'settings'>): McpToolSource {
  return new McpToolSource({
    logger: core.logger,
    now: () => core.clock.now(),
    servers: (owner) => core.settings.section<McpServersSettings>(owner, 'mcpServers'),
  });
}

export function createMcpDomain(core: Pick<CoreServices, 'logger' | 'clock' | 'settings' | 'catalog' | 'onClose'>): McpDomain {
  registerMcpErrors();
  registerWebTools(core);
  core.settings.registerSection<McpServersSettings>('mcpServers', {
    schema: McpServersSettings,
    defaultValue: {},
    redact: redactServers,
    prepare: (next, prev) => restoreRedacted(next, prev ?? {}),
  });
  const source = createMcpSource(core);
  core.catalog.register(source);
  core.settings.onChange((owner, doc, changed) => {
    if (changed && !changed.includes('mcpServers')) return;
    source.applySettings(owner, (doc.mcpServers ?? {}) as McpServersSettings);
  });
  core.onClose(() => source.close());
  return { source };
}
