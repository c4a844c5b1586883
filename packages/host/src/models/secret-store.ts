import type { FollowedPrefix, Vault } from '../secrets/vault';

/**
 * One domain's internal values in the vault (backend API keys: `backend:<id>`; MCP header and env
 * values: `mcp:<server>/<headers|env>/<name>`), sealed like every secret (docs/secrets.md). Reads are
 * synchronous (the vault holds internal values opened in memory); writes replace the domain's
 * values of an owner in one transaction. On a shared PostgreSQL database another host may have
 * changed them: a user of a value calls `fresh` before its use (a model call, an MCP connection,
 * a settings save that keeps stored values). Nothing here logs a value.
 */
export class SecretStore {
  private readonly prefix: FollowedPrefix;

  constructor(
    private readonly vault: Vault,
    domain: 'backend' | 'mcp',
  ) {
    this.prefix = `${domain}:`;
  }

  /**
   * Reads the owner's values again when another host changed them since (a shared database); answers
   * the vault's stamp of them, which moves whenever they were read again here (`Vault.stamp`).
   */
  async fresh(owner: string): Promise<number> {
    await this.vault.follow(owner, [this.prefix]);
    return this.vault.stamp(owner, this.prefix);
  }

  get(owner: string, id: string): string | undefined {
    return this.vault.getInternal(owner, `${this.prefix}${id}`);
  }

  has(owner: string, id: string): boolean {
    return this.get(owner, id) !== undefined;
  }

  /** Replaces the owner's values with exactly `keys` (ids absent from it are dropped). */
  replace(owner: string, keys: Record<string, string>): Promise<void> {
    return this.vault.replaceInternal(owner, this.prefix, keys);
  }
}
