import type { CoreServices } from '../services';
import { registerWebTools } from '../tools/builtin/web-tools';
import { SecretStore } from '../models/secret-store';
import { type McpServersSettings, registerMcpErrors } from './mcp.config';
import { mcpServersSection, revealServers } from './mcp-secrets';
import { McpToolSource } from './mcp-source';
import { launchMcpStdio } from './mcp-launch';
import { hostOwnerIsolation } from '../tools/builtin/builtin.source';

/**
 * The MCP domain's services: the `mcpServers` settings section and the MCP tool source
 * (reconnected when the section changes). It also registers the web built-ins (`web_fetch`,
 * `web_search` and their settings sections), which share this domain's outbound-network concerns.
 */

export interface McpDomain {
  source: McpToolSource;
}

/** Header and env values of MCP servers are kept in the vault, like backend API keys. */
export function mcpSecrets(core: Pick<CoreServices, 'vault'>): SecretStore {
  return new SecretStore(core.vault, 'mcp');
}

export function createMcpSource(core: Pick<CoreServices, 'logger' | 'clock' | 'settings' | 'config' | 'vault'>, secrets = mcpSecrets(core)): McpToolSource {
  const launch = { home: core.config.home, hostEnv: core.config.env, isolation: hostOwnerIsolation(core) };
  return new McpToolSource({
    launchStdio: (owner, server, config) => launchMcpStdio(launch, owner, server, config),
    logger: core.logger,
    now: () => core.clock.now(),
    servers: async (owner) => revealServers(secrets, owner, await core.settings.section<McpServersSettings>(owner, 'mcpServers')),
    fresh: (owner) => secrets.fresh(owner),
    hasServersNow: (owner) => {
      const servers = core.settings.sectionNow<McpServersSettings>(owner, 'mcpServers');
      return servers === undefined ? undefined : Object.keys(servers).length > 0;
    },
  });
}

export function createMcpDomain(core: Pick<CoreServices, 'logger' | 'clock' | 'settings' | 'catalog' | 'onClose' | 'config' | 'vault'>): McpDomain {
  registerMcpErrors();
  registerWebTools(core);
  const secrets = mcpSecrets(core);
  core.settings.registerSection<McpServersSettings>('mcpServers', mcpServersSection(secrets, hostOwnerIsolation(core)));
  const source = createMcpSource(core, secrets);
  core.catalog.register(source);
  core.settings.onChange((owner, doc, changed) => {
    if (changed && !changed.includes('mcpServers')) return;
    source.applySettings(owner, revealServers(secrets, owner, (doc.mcpServers ?? {}) as McpServersSettings));
  });
  core.onClose(() => source.close());
  return { source };
}
