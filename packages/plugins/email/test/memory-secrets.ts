import type { PluginSecrets } from '@fengyu/plugin-sdk';

/** The host's vault as a worker sees it, in memory (the handlers' tests call them without a host). */
export function memorySecrets(): PluginSecrets & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return {
    values,
    get: async (key) => values.get(key),
    set: async (key, value) => {
      if (value === null) values.delete(key);
      else values.set(key, value);
    },
  };
}
