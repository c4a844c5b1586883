import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isFengYuError, localize } from '@fengyu/protocol';
import { loadConfig } from '../config/config';
import { rotateKey } from '../secrets/rotate';
import { registerSecretErrors } from '../secrets/secrets.errors';
import { VaultRepository } from '../secrets/vault.repository';
import { migrate, type OpenedDatabase, openConfigured } from '../storage/database';

/** `fengyu secrets rotate-key`: every stored value re-sealed with a new key, in one transaction. */

/** True when `host.json` names a live process (this host's data is in use). */
function hostRunning(home: string): number | undefined {
  const file = join(home, 'host.json');
  if (!existsSync(file)) return undefined;
  try {
    const pid = Number((JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown }).pid);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

export async function rotateKeyCommand(opts: { home?: string }): Promise<number> {
  registerSecretErrors();
  const config = loadConfig({ home: opts.home });
  const pid = hostRunning(config.home);
  if (pid !== undefined) {
    process.stderr.write(`A host is running on ${config.home} (pid ${pid}): stop it first (every host, on a shared database), then rotate.\n`);
    return 1;
  }
  let database: OpenedDatabase | undefined;
  try {
    database = openConfigured(config);
    await migrate(database.db);
    const r = await rotateKey(new VaultRepository(database.db), { home: config.home, ...(config.secretsKey !== undefined ? { envKey: config.secretsKey } : {}) });
    if (r.newKeyText) {
      process.stdout.write(
        `Re-encrypted ${r.count} value(s) with a new key. Set FENGYU_SECRETS_KEY to the new key before the next start:\n${r.newKeyText}\n(it is also in ${r.nextFile}, mode 0600, removed by the first start that uses it)\n`,
      );
    } else process.stdout.write(`Re-encrypted ${r.count} value(s) with a new key in ${join(config.home, 'secrets.key')}.\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`rotate-key failed: ${isFengYuError(err) ? localize(err.code, err.params) : (err as Error).message}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}
