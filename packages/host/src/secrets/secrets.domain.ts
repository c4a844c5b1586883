import type { Clock } from '../clock';
import type { HostConfig } from '../config/config';
import type { OpenedDatabase } from '../storage/database';
import { adoptKeptInputs } from './kept-inputs.repository';
import { adoptLegacySecrets } from './adopt-legacy';
import { registerSecretErrors } from './secrets.errors';
import { loadKeys } from './secrets-key';
import { Vault } from './vault';
import { VaultRepository } from './vault.repository';

/**
 * The secrets domain's start: the vault opened with its key (or a clear start-up error), then the
 * clear copies earlier versions left moved into it (settings values, and the secret inputs schedules,
 * webhook triggers and queued tasks kept). Built in the core (`compose.ts`), before any
 * domain that reads a secret.
 */
export async function openVault(database: OpenedDatabase, config: Pick<HostConfig, 'home' | 'secretsKey'>, clock: Clock): Promise<Vault> {
  registerSecretErrors();
  const keys = loadKeys({ home: config.home, ...(config.secretsKey !== undefined ? { envKey: config.secretsKey } : {}) });
  const repo = new VaultRepository(database.db);
  const vault = await Vault.open(repo, keys, config.home, clock, database.dialect);
  await adoptLegacySecrets(repo, vault, config.home);
  await adoptKeptInputs(database.db, vault, () => repo.compact());
  return vault;
}
