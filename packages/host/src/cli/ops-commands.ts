import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type HostConfig, loadConfig } from '../config/config';
import { PluginRepository } from '../plugins/plugin.repository';
import { detectSandbox } from '../plugins/sandbox';
import { dialectOf, engineVersion, migrate, type OpenedDatabase, openConfigured, pendingMigrations } from '../storage/database';
import { findChromium } from '../tools/browser/chromium';

/** `fengyu migrate` and `fengyu doctor`: operations on a home or a shared database, no HTTP. */

/** Where the configured database is, without its password. */
function describeDatabase(config: HostConfig): string {
  if (!config.databaseUrl) return `SQLite ${join(config.home, 'fengyu.db')}`;
  try {
    const u = new URL(config.databaseUrl);
    return `PostgreSQL ${u.host}${u.pathname}`;
  } catch {
    return 'PostgreSQL (FENGYU_DATABASE_URL)';
  }
}

/** The configuration, or undefined after printing which variable is wrong. */
function configOrReport(home: string | undefined): HostConfig | undefined {
  try {
    return loadConfig({ home });
  } catch (err) {
    const issues = (err as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues;
    process.stderr.write(`invalid configuration: ${issues ? issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ') : (err as Error).message}\n`);
    return undefined;
  }
}

export async function migrateCommand(opts: { home?: string; check?: boolean }): Promise<number> {
  const config = configOrReport(opts.home);
  if (!config) return 2;
  let database: OpenedDatabase | undefined;
  try {
    database = openConfigured(config);
    if (opts.check) {
      const pending = await pendingMigrations(database.db);
      process.stdout.write(pending.length === 0 ? `${describeDatabase(config)}: up to date\n` : `${describeDatabase(config)}: ${pending.length} pending: ${pending.join(', ')}\n`);
      return pending.length === 0 ? 0 : 1;
    }
    const applied = await migrate(database.db);
    process.stdout.write(applied.length === 0 ? `${describeDatabase(config)}: up to date\n` : `${describeDatabase(config)}: applied ${applied.join(', ')}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`migrate failed on ${describeDatabase(config)}: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}

export type CheckLevel = 'ok' | 'missing' | 'error';

export interface Check {
  name: string;
  level: CheckLevel;
  detail: string;
  /** What to do about it (missing or error only). */
  fix?: string;
}

/** The report's text: one line per check, then its fix indented below. */
export function formatChecks(checks: readonly Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks.map((c) => `${c.level.padEnd(7)} ${c.name.padEnd(width)}  ${c.detail}${c.fix ? `\n        ${' '.repeat(width)}  → ${c.fix}` : ''}`).join('\n');
}

async function checkDatabase(config: HostConfig): Promise<{ checks: Check[]; database?: OpenedDatabase }> {
  const where = describeDatabase(config);
  let database: OpenedDatabase | undefined;
  try {
    database = openConfigured(config);
    const postgres = dialectOf(database.db) === 'postgres';
    const v = (await engineVersion(database.db)) ?? '?';
    const pending = await pendingMigrations(database.db);
    const checks: Check[] = [{ name: 'database', level: 'ok', detail: `${where} (${postgres ? 'PostgreSQL' : 'SQLite'} ${v})` }];
    checks.push(
      pending.length === 0
        ? { name: 'migrations', level: 'ok', detail: 'schema up to date' }
        : { name: 'migrations', level: 'error', detail: `${pending.length} pending (${pending.join(', ')})`, fix: 'run `fengyu migrate` (a host also migrates at start)' },
    );
    return { checks, database };
  } catch (err) {
    await database?.close();
    return {
      checks: [
        {
          name: 'database',
          level: 'error',
          detail: `${where}: ${(err as Error).message}`,
          fix: config.databaseUrl ? 'check FENGYU_DATABASE_URL and that the PostgreSQL server accepts connections' : `check that ${config.home} is writable`,
        },
      ],
    };
  }
}

async function checkPlugins(database: OpenedDatabase | undefined, config: HostConfig): Promise<Check[]> {
  const checks: Check[] = [];
  const unbuilt = config.bundledPluginDirs.filter((d) => !existsSync(d));
  checks.push(unbuilt.length === 0 ? { name: 'bundled plugins', level: 'ok', detail: `${config.bundledPluginDirs.length} built` } : { name: 'bundled plugins', level: 'missing', detail: `not built: ${unbuilt.join(', ')}`, fix: 'run `npm run build`' });
  if (!database) return checks;
  try {
    const plugins = await new PluginRepository(database.db).list();
    const lost = plugins.filter((p) => !existsSync(p.root));
    checks.push(
      lost.length === 0
        ? { name: 'installed plugins', level: 'ok', detail: `${plugins.length} installed (${plugins.filter((p) => p.enabled).length} enabled)` }
        : {
            name: 'installed plugins',
            level: 'missing',
            detail: `files missing for ${lost.map((p) => `${p.id} ${p.version}`).join(', ')}`,
            fix: 'reinstall them (`fengyu plugin install <file>`); with several hosts, every host needs the same FENGYU_HOME/plugins',
          },
    );
  } catch {
    // no plugins table yet: reported by the migrations check
  }
  return checks;
}

/** Everything a host needs, checked without starting one. */
export async function diagnose(config: HostConfig): Promise<Check[]> {
  const { checks, database } = await checkDatabase(config);
  try {
    const sandbox = detectSandbox(config.sandbox === 'off' ? 'auto' : config.sandbox, config.env);
    checks.push(
      sandbox.posture.mode === 'sandboxed'
        ? { name: 'sandbox', level: 'ok', detail: `bubblewrap (${sandbox.bwrapPath})${config.sandbox === 'off' ? ', but FENGYU_SANDBOX=off' : ''}` }
        : { name: 'sandbox', level: 'missing', detail: sandbox.unavailable ?? 'bubblewrap not usable: plugins and other owners’ commands run unsandboxed', fix: 'apt-get install bubblewrap (Linux, unprivileged user namespaces)' },
    );
    const chromium = findChromium({ override: config.env.FENGYU_CHROMIUM, path: config.env.PATH });
    checks.push('path' in chromium ? { name: 'chromium', level: 'ok', detail: chromium.path } : { name: 'chromium', level: 'missing', detail: `${chromium.missing}: the browser tools are unavailable`, fix: 'apt-get install chromium' });
    checks.push(existsSync(join(config.uiDir, 'index.html')) ? { name: 'web UI', level: 'ok', detail: config.uiDir } : { name: 'web UI', level: 'missing', detail: `not built at ${config.uiDir}`, fix: 'run `npm run build`' });
    checks.push(...(await checkPlugins(database, config)));
  } finally {
    await database?.close();
  }
  return checks;
}

export async function doctorCommand(opts: { home?: string }): Promise<number> {
  const config = configOrReport(opts.home);
  if (!config) return 2;
  const checks = await diagnose(config);
  process.stdout.write(`${formatChecks(checks)}\n`);
  const errors = checks.filter((c) => c.level === 'error').length;
  const missing = checks.filter((c) => c.level === 'missing').length;
  process.stdout.write(errors > 0 ? `${errors} problem(s) stop a host from starting.\n` : missing > 0 ? `Ready; ${missing} optional part(s) missing.\n` : 'Ready.\n');
  return errors > 0 ? 1 : 0;
}
