import { describe, expect, it } from 'vitest';
import type { Vault } from '../secrets/vault';
import { pluginSecretsHandler } from './plugin-secrets';

/** A vault's internal values in memory (the handler only names and checks; the vault seals). */
function memoryVault() {
  const values = new Map<string, string>();
  const vault = {
    getInternal: (_owner: string, name: string) => values.get(`${_owner}|${name}`),
    mergeInternal: async (owner: string, v: Record<string, string>) => {
      for (const [k, x] of Object.entries(v)) values.set(`${owner}|${k}`, x);
    },
    removeInternal: async (owner: string, name: string) => values.delete(`${owner}|${name}`),
  } as unknown as Vault;
  return { vault, values };
}

describe("a worker's own secrets", () => {
  it('are stored under its plugin, read back, and removed with null', async () => {
    const { vault, values } = memoryVault();
    const answer = pluginSecretsHandler(vault);
    expect(await answer('fan.summer.email', 'default', '$/secrets/set', { key: 'account/office', value: 'pw' })).toEqual({});
    expect([...values.keys()]).toEqual(['default|plugin:fan.summer.email/account/office']);
    expect(await answer('fan.summer.email', 'default', '$/secrets/get', { key: 'account/office' })).toEqual({ value: 'pw' });
    await answer('fan.summer.email', 'default', '$/secrets/set', { key: 'account/office', value: null });
    expect(await answer('fan.summer.email', 'default', '$/secrets/get', { key: 'account/office' })).toEqual({});
  });

  it("never reach another plugin's values, another domain's, or anything by a crafted key", async () => {
    const { vault, values } = memoryVault();
    values.set('default|plugin:other/account/office', 'theirs');
    values.set('default|backend:openai', 'sk-host');
    const answer = pluginSecretsHandler(vault);
    expect(await answer('evil', 'default', '$/secrets/get', { key: 'account/office' })).toEqual({});
    for (const key of ['../other/account/office', '/account', '', 'A', 'x'.repeat(101), 7]) {
      await expect(answer('evil', 'default', '$/secrets/get', { key })).rejects.toThrow(/secret key/);
    }
    await expect(answer('evil', 'default', '$/secrets/set', { key: 'k', value: '' })).rejects.toThrow(/secret value/);
    await expect(answer('evil', 'default', '$/secrets/list', {})).rejects.toThrow(/unknown method/);
  });

  it("answer each owner's worker from that owner's vault only", async () => {
    const { vault, values } = memoryVault();
    values.set('default|plugin:fan.summer.email/account/office', 'primary-pw');
    const answer = pluginSecretsHandler(vault);
    expect(await answer('fan.summer.email', 'bob', '$/secrets/get', { key: 'account/office' })).toEqual({});
    await answer('fan.summer.email', 'bob', '$/secrets/set', { key: 'account/office', value: 'bob-pw' });
    expect(values.get('default|plugin:fan.summer.email/account/office')).toBe('primary-pw');
    expect(await answer('fan.summer.email', 'bob', '$/secrets/get', { key: 'account/office' })).toEqual({ value: 'bob-pw' });
  });
});
