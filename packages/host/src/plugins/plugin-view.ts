import { clampTimeout, type PluginView, type SandboxPosture, supportsAi } from '@fengyu/protocol';
import type { InstalledPlugin } from './plugin.repository';

export type { PluginView };

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
    ...(p.manifest.i18n ? { i18n: viewTexts(p.manifest.i18n) } : {}),
    installedAt: p.installedAt,
    updatedAt: p.updatedAt,
  };
}

function viewTexts(i18n: NonNullable<InstalledPlugin['manifest']['i18n']>): NonNullable<PluginView['i18n']> {
  const out: NonNullable<PluginView['i18n']> = {};
  for (const [locale, t] of Object.entries(i18n)) {
    if (!t) continue;
    const tools = Object.fromEntries(Object.entries(t.tools ?? {}).flatMap(([name, x]) => (x.description ? [[name, x.description]] : [])));
    out[locale] = { ...(t.name ? { name: t.name } : {}), ...(t.description ? { description: t.description } : {}), ...(Object.keys(tools).length ? { tools } : {}) };
  }
  return out;
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
    i18n: { type: 'object', additionalProperties: true },
    installedAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;
