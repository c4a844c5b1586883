import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../config/config';
import { defaultProcessGroups, runBounded } from '../process/spawn';
import { type ServicePlan, type ServicePlatform, servicePlan } from './service-units';

/**
 * `fengyu service install | uninstall | status [--dry-run]`: the shell around `service-units.ts`.
 * `--dry-run` prints the file and the commands and touches nothing. Everything the system is
 * asked to do goes through `deps` (tests pass their own and never install anything).
 */

export type ServiceAction = 'install' | 'uninstall' | 'status';

export interface ServiceDeps {
  platform: NodeJS.Platform;
  node: string;
  entry: string;
  userHome: string;
  uid?: number;
  user?: string;
  out: (text: string) => void;
  /** Runs one command vector with this environment; answers its exit status (null when it could not start). */
  exec: (argv: string[], env: Record<string, string>) => Promise<number | null>;
  writeFile: (path: string, content: string, encoding: 'utf8' | 'utf16le') => void;
  removeFile: (path: string) => void;
  exists: (path: string) => boolean;
}

/** Variables a person may have set for `npm start` that the service deliberately does not carry (docs/security.md). */
const NOT_CARRIED = ['FENGYU_TOKEN', 'FENGYU_SECRETS_KEY', 'FENGYU_DATABASE_URL'] as const;

export async function serviceCommand(action: ServiceAction, opts: { home?: string; port?: number; dryRun?: boolean }, deps: ServiceDeps = systemDeps()): Promise<number> {
  const platform = supported(deps.platform);
  if (!platform) {
    deps.out(`fengyu service: ${deps.platform} has no per-user service manager FengYu knows (Linux: systemd, macOS: launchd, Windows: Task Scheduler).\n`);
    return 2;
  }
  if (opts.port !== undefined && (!Number.isInteger(opts.port) || opts.port < 1 || opts.port > 65535)) {
    deps.out('fengyu service: --port must be a whole number from 1 to 65535.\n');
    return 2;
  }
  const config = loadConfig({ home: opts.home });
  const plan = servicePlan({ platform, node: deps.node, entry: deps.entry, home: config.home, userHome: deps.userHome, ...(opts.port !== undefined ? { port: opts.port } : {}), ...(deps.uid !== undefined ? { uid: deps.uid } : {}), ...(deps.user ? { user: deps.user } : {}) });
  const commands = plan[action];
  if (opts.dryRun) {
    deps.out(dryRunText(action, plan, commands));
    return 0;
  }
  if (action === 'install') {
    const skipped = NOT_CARRIED.filter((k) => config.env[k]);
    if (skipped.length) deps.out(`note: ${skipped.join(', ')} ${skipped.length > 1 ? 'are' : 'is'} set here but not carried into the service (it reads its token and keys from ${config.home}).\n`);
    deps.writeFile(plan.file.path, plan.file.content, plan.file.encoding);
    deps.out(`wrote ${plan.file.path}\n`);
  }
  if (action === 'status' && !deps.exists(plan.file.path)) {
    deps.out(`not installed (no ${plan.file.path})\n`);
    return 3;
  }
  // the service manager's own variables (user bus, runtime dir) pass; the host's FENGYU_* never do
  const env = Object.fromEntries(Object.entries(config.env).filter((e): e is [string, string] => typeof e[1] === 'string' && !e[0].startsWith('FENGYU_')));
  let failed = 0;
  for (const argv of commands) {
    deps.out(`$ ${argv.join(' ')}\n`);
    const status = await deps.exec(argv, env);
    // stopping a task that is not running fails harmlessly on the way to deleting it
    if (status !== 0 && !(action === 'uninstall' && argv !== commands.at(-1))) failed = status ?? 127;
  }
  if (action === 'uninstall' && deps.exists(plan.file.path)) {
    deps.removeFile(plan.file.path);
    deps.out(`removed ${plan.file.path}\n`);
  }
  return failed === 0 ? 0 : 1;
}

function dryRunText(action: ServiceAction, plan: ServicePlan, commands: string[][]): string {
  const lines = [`# fengyu service ${action} --dry-run: nothing is written or run`];
  if (action === 'install') lines.push(`# would write ${plan.file.path}${plan.file.encoding === 'utf16le' ? ' (UTF-16 with a byte order mark)' : ''}:`, plan.file.content.replace(/\r\n/g, '\n').trimEnd(), '# then run:');
  else if (action === 'uninstall') lines.push('# would run:');
  else lines.push(`# would look for ${plan.file.path}, then run:`);
  for (const argv of commands) lines.push(argv.map(shellQuote).join(' '));
  if (action === 'uninstall') lines.push(`# then remove ${plan.file.path}`);
  return `${lines.join('\n')}\n`;
}

/** For display only (the commands run as argument vectors): POSIX single quotes where needed. */
function shellQuote(s: string): string {
  return /^[\w@%+=:,./\\-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function supported(p: NodeJS.Platform): ServicePlatform | undefined {
  return p === 'linux' || p === 'darwin' || p === 'win32' ? p : undefined;
}

function systemDeps(): ServiceDeps {
  const entry = process.argv[1] ? resolve(process.argv[1]) : '';
  return {
    platform: process.platform,
    node: process.execPath,
    entry,
    userHome: homedir(),
    ...(typeof process.getuid === 'function' ? { uid: process.getuid() } : {}),
    user: userInfo().username,
    out: (text) => process.stdout.write(text),
    exec: async (argv, env) => {
      const r = await runBounded(defaultProcessGroups(), { command: argv[0] as string, args: argv.slice(1), cwd: homedir(), env }, { timeoutMs: 60_000, outputCap: 256 * 1024 });
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      if (r.spawnError) process.stderr.write(`could not start ${argv[0]}: ${r.spawnError.message}\n`);
      return r.spawnError ? null : r.exitCode;
    },
    writeFile: (path, content, encoding) => {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, encoding === 'utf16le' ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(content, 'utf16le')]) : content, { mode: 0o600 });
    },
    removeFile: (path) => rmSync(path, { force: true }),
    exists: existsSync,
  };
}
