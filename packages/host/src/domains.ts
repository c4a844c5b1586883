import type { DomainRegistrar } from './context';

/**
 * The HTTP surfaces of the domains, registered by `createHost` in this order after the core
 * routes. Services are built in `compose.ts`; a registrar only adds routes (from its own
 * `*.routes.ts`). The order only sets the order of routes in the OpenAPI document.
 */
export const DOMAINS: Array<{ name: string; load: () => Promise<DomainRegistrar> }> = [
  { name: 'permissions', load: async () => (await import('./permissions/permissions.routes')).registerPermissions },
  { name: 'plugins', load: async () => (await import('./plugins/plugins.routes')).registerPlugins },
  { name: 'mcp', load: async () => (await import('./mcp/mcp.routes')).registerMcp },
  { name: 'browser', load: async () => (await import('./tools/browser/browser.source')).registerBrowser },
  { name: 'workflows', load: async () => (await import('./workflows/workflows.routes')).registerWorkflows },
  { name: 'portability', load: async () => (await import('./portability/portability.routes')).registerPortability },
  { name: 'mcp-server', load: async () => (await import('./mcp-server/mcp-server.routes')).registerMcpServer },
  { name: 'tasks', load: async () => (await import('./tasks/tasks.routes')).registerTasks },
  { name: 'webhooks', load: async () => (await import('./webhooks/webhooks.routes')).registerWebhooks },
  { name: 'models', load: async () => (await import('./models/models.routes')).registerModels },
  { name: 'builder-assist', load: async () => (await import('./chat/builder-assist.routes')).registerBuilderAssist },
  { name: 'inbox', load: async () => (await import('./inbox/inbox.routes')).registerInbox },
  { name: 'secrets', load: async () => (await import('./secrets/secrets.routes')).registerSecrets },
  { name: 'memory', load: async () => (await import('./memory/memory.routes')).registerMemory },
  { name: 'schedules', load: async () => (await import('./schedules/schedules.routes')).registerSchedules },
];
