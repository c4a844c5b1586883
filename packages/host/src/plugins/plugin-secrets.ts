import type { Vault } from '../secrets/vault';

/**
 * A plugin's own secrets (an e-mail account's password), asked for by its worker with
 * `$/secrets/get` / `$/secrets/set`: kept sealed in the host's vault as internal values named
 * `plugin:<pluginId>/<key>`, never in the plugin's data directory. A worker reaches only its own
 * plugin's keys (the prefix is the host's, not the worker's), and a bad key or value is refused.
 * Each owner's workers ask for that owner's values (in that owner's vault), so one owner's
 * plugin secrets never answer another owner's call.
 */

export const SECRETS_GET_METHOD = '$/secrets/get';
export const SECRETS_SET_METHOD = '$/secrets/set';
const KEY_RE = /^[a-z0-9][a-z0-9._/-]{0,99}$/;
const MAX_VALUE_CHARS = 65_536;

/** A worker's own request, answered for the owner that worker works for. */
export type WorkerRequestHandler = (pluginId: string, owner: string, method: string, params: unknown) => Promise<unknown>;

export function pluginSecretName(pluginId: string, key: string): string {
  return `plugin:${pluginId}/${key}`;
}

/** Answers a worker's `$/secrets/*` requests from the vault of the owner the worker works for. */
export function pluginSecretsHandler(vault: Vault): WorkerRequestHandler {
  return async (pluginId, owner, method, params) => {
    const p = (params && typeof params === 'object' ? params : {}) as { key?: unknown; value?: unknown };
    if (method !== SECRETS_GET_METHOD && method !== SECRETS_SET_METHOD) throw new Error(`unknown method ${method}`);
    if (typeof p.key !== 'string' || !KEY_RE.test(p.key)) throw new Error('a secret key is 1..100 characters of a-z, 0-9 and ._/- (starting with a letter or digit)');
    const name = pluginSecretName(pluginId, p.key);
    if (method === SECRETS_GET_METHOD) {
      const value = vault.getInternal(owner, name);
      return value === undefined ? {} : { value };
    }
    if (p.value === null) {
      await vault.removeInternal(owner, name);
      return {};
    }
    if (typeof p.value !== 'string' || p.value.length === 0 || p.value.length > MAX_VALUE_CHARS) throw new Error(`a secret value is a string of 1..${MAX_VALUE_CHARS} characters, or null to remove it`);
    await vault.mergeInternal(owner, { [name]: p.value });
    return {};
  };
}
