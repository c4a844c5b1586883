import type { DomainRegistrar } from './context';

/**
 * The domains of the host, registered by `createHost` in this order. Each domain adds one line
 * here (its `register…` from its own `*.routes.ts` or `index.ts`). Order matters only where a
 * domain uses another's setup: permissions before anything that calls tools, plugins before
 * workflows (file grants), models last (they read the final catalog).
 */
export const DOMAINS: Array<{ name: string; load: () => Promise<DomainRegistrar> }> = [
  { name: 'permissions', load: async () => (await import('./permissions/permissions.routes')).registerPermissions },
  { name: 'plugins', load: async () => (await import('./plugins/plugins.routes')).registerPlugins },
  { name: 'mcp', load: async () => (await import('./mcp/mcp.routes')).registerMcp },
  { name: 'browser', load: async () => (await import('./tools/browser/browser.source')).registerBrowser },
  { name: 'workflows', load: async () => (await import('./workflows/workflows.routes')).registerWorkflows },
  { name: 'tasks', load: async () => (await import('./tasks/tasks.routes')).registerTasks },
  { name: 'webhooks', load: async () => (await import('./webhooks/webhooks.routes')).registerWebhooks },
  { name: 'models', load: async () => (await import('./models/models.routes')).registerModels },
  { name: 'schedules', load: async () => (await import('./schedules/schedules.routes')).registerSchedules },
];
