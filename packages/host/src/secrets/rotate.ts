import { systemClock } from '../clock';
import { keyText, newKey, open, type SecretsKey, seal } from './cipher';
import { type KeySource, loadKeys, nextKeyFile, promoteNextKey, writeKeyFile } from './secrets-key';
import { Vault } from './vault';
import type { VaultRepository } from './vault.repository';

/**
 * `fengyu secrets rotate-key`: every value re-sealed with a new key in one transaction. The new
 * key is written (`secrets.key.next`, 0600, synced) before the transaction, and renamed over
 * `secrets.key` after its commit; a start that finds the rename undone finishes it (see
 * `Vault.open`), so a crash at any point leaves every value readable. With FENGYU_SECRETS_KEY the
 * new key stays in `secrets.key.next` and is printed: the variable must be changed to it.
 */

export interface RotateResult {
  count: number;
  /** The new key's text, only when the key comes from FENGYU_SECRETS_KEY (the operator must set it). */
  newKeyText?: string;
  nextFile?: string;
}

export async function rotateKey(repo: VaultRepository, src: KeySource): Promise<RotateResult> {
  // the vault's start-up checks first: a wrong or missing key rotates nothing
  await Vault.open(repo, loadKeys(src), src.home, systemClock);
  const keys = loadKeys(src);
  const old = keys.key as SecretsKey;
  const next = newKey();
  writeKeyFile(nextKeyFile(src.home), next);
  const count = await repo.transaction(async (trx) => {
    const rows = await repo.all(trx);
    for (const r of rows) await repo.reseal(r.owner, r.name, seal(next, r.owner, r.name, open(old, r.owner, r.name, r.value)), next.id, trx);
    return rows.length;
  });
  if (keys.fromEnv) return { count, newKeyText: keyText(next), nextFile: nextKeyFile(src.home) };
  promoteNextKey(src.home);
  return { count };
}
