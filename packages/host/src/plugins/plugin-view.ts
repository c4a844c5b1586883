import { clampTimeout, supportsAi } from '@fengyu/protocol';
import type { SandboxPosture } from './posture';
import type { InstalledPlugin } from './plugin.repository';

/** What `GET /api/plugins` shows of one installed plugin. */
export interface PluginView {
  id: string;
  name: string;
  version: string;
  description: string;
  enabled: boolean;
  supportsAi: boolean;
  bundled: boolean;
  tools: Array<{ id: string; name: string; description: string; effect: string; idempotent: boolean; timeoutSeconds?: number; flowNode: boolean }>;
  sandbox: SandboxPosture & { network: boolean };
  hooks: { present: boolean; trusted: boolean };
  installedAt: string;
  updatedAt: string;
}

export function pluginView(p: InstalledPlugin, posture: SandboxPosture, hooks: { present: boolean; trusted: boolean }): PluginView {
  const nodes = new Set((p.manifest.flowNodes ?? []).map((n) => n.tool));
  return {
    id: p.id,
    name: p.name,
    version: p.version,
    description: p.description,
    enabled: p.enabled,
    supportsAi: supportsAi(p.manifest),
    bundled: p.bundled,
    tools: (p.manifest.aiTools ?? []).map((t) => {
      const timeoutSeconds = clampTimeout(t.timeoutSeconds);
      return {
        id: `${p.id}:${t.name}`,
        name: t.name,
        description: t.description,
        effect: t.effect,
        idempotent: t.idempotent === true,
        ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
        flowNode: nodes.has(t.name),
      };
    }),
    sandbox: { ...posture, network: p.manifest.sandbox?.network === true },
    hooks,
    installedAt: p.installedAt,
    updatedAt: p.updatedAt,
  };
}

export const pluginViewSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    version: { type: 'string' },
    description: { type: 'string' },
    enabled: { type: 'boolean' },
    supportsAi: { type: 'boolean' },
    bundled: { type: 'boolean' },
    tools: { type: 'array', items: { type: 'object', additionalProperties: true } },
    sandbox: { type: 'object', properties: { mode: { type: 'string' }, backend: { type: 'string' }, network: { type: 'boolean' } } },
    hooks: { type: 'object', properties: { present: { type: 'boolean' }, trusted: { type: 'boolean' } } },
    installedAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;
