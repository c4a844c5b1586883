import type { SegmentWords } from './rules';
import type { ShellAnalysis } from './shell';
import { execOptionReason } from './exec-options';
import { gitFloorReason, isLongOption } from './git';
import { basename, isStartupPath, POSIX_SHELLS } from './wrappers';

/**
 * The dangerous-command floor: commands that always ask, whatever allow
 * rule would cover them. Checked on every layer of every segment (so `sudo`, `env rm`,
 * `/bin/rm`, `sh -c 'rm …'` and `$(rm …)` all hit it) by the command's basename. The list is
 * documented in docs/permissions.md; keep the two in step.
 */

/** basename → why it is on the floor. */
export const FLOOR_COMMANDS: Readonly<Record<string, string>> = {
  rm: 'deletes files',
  shred: 'destroys file contents',
  unlink: 'deletes files',
  sudo: 'runs a command as another user',
  doas: 'runs a command as another user',
  su: 'switches user',
  runuser: 'runs a command as another user',
  pkexec: 'runs a command as another user',
  kill: 'signals processes',
  pkill: 'signals processes',
  killall: 'signals processes',
  shutdown: 'stops the machine',
  reboot: 'restarts the machine',
  halt: 'stops the machine',
  poweroff: 'stops the machine',
  init: 'changes the run level',
  telinit: 'changes the run level',
  mkswap: 'formats a device',
  fdisk: 'repartitions a disk',
  sfdisk: 'repartitions a disk',
  parted: 'repartitions a disk',
  wipefs: 'erases file-system signatures',
  mount: 'mounts file systems',
  umount: 'unmounts file systems',
  insmod: 'loads kernel modules',
  rmmod: 'unloads kernel modules',
  modprobe: 'loads kernel modules',
  crontab: 'schedules commands',
  at: 'schedules commands',
  batch: 'schedules commands',
  eval: 'runs a string as shell code',
  exec: 'replaces the shell with another program',
  source: 'runs a file as shell code',
  '.': 'runs a file as shell code',
  trap: 'runs shell code on a signal',
  alias: 'redefines commands',
  hash: 'redefines where commands are found',
  enable: 'loads or disables shell builtins',
  python: 'interpreter: runs arbitrary code',
  node: 'interpreter: runs arbitrary code',
  nodejs: 'interpreter: runs arbitrary code',
  deno: 'interpreter: runs arbitrary code',
  bun: 'interpreter: runs arbitrary code',
  bunx: 'downloads and runs packages',
  npx: 'downloads and runs packages',
  ruby: 'interpreter: runs arbitrary code',
  irb: 'interpreter: runs arbitrary code',
  perl: 'interpreter: runs arbitrary code',
  php: 'interpreter: runs arbitrary code',
  pwsh: 'interpreter: runs arbitrary code',
  powershell: 'interpreter: runs arbitrary code',
  osascript: 'interpreter: runs arbitrary code',
  lua: 'interpreter: runs arbitrary code',
  luajit: 'interpreter: runs arbitrary code',
  tclsh: 'interpreter: runs arbitrary code',
  wish: 'interpreter: runs arbitrary code',
  Rscript: 'interpreter: runs arbitrary code',
  julia: 'interpreter: runs arbitrary code',
  zsh: 'shell: runs arbitrary code',
  fish: 'shell: runs arbitrary code',
  csh: 'shell: runs arbitrary code',
  tcsh: 'shell: runs arbitrary code',
  busybox: 'multi-call binary: runs any applet',
  toybox: 'multi-call binary: runs any applet',
  bind: 'binds keys to shell commands',
  fc: 're-runs commands from the history',
  sg: 'runs a command as another group',
  sudoedit: 'edits files as another user through an editor',
  parallel: 'runs its arguments as shell commands',
  tmux: 'runs commands in a detached terminal',
  screen: 'runs commands in a detached terminal',
  byobu: 'runs commands in a detached terminal',
  vi: 'editor that runs commands (-c, +cmd, :!)',
  vim: 'editor that runs commands (-c, +cmd, :!)',
  nvim: 'editor that runs commands (-c, +cmd, :!)',
  view: 'editor that runs commands (-c, +cmd, :!)',
  vimdiff: 'editor that runs commands (-c, +cmd, :!)',
  rvim: 'editor that runs commands (-c, +cmd, :!)',
  ex: 'editor that runs commands (-c, +cmd, :!)',
  emacs: 'editor that evaluates code (--eval, -l)',
  gdb: 'debugger: runs commands and arbitrary code (-ex, -x, shell)',
  lldb: 'debugger: runs commands and arbitrary code',
  expect: 'interpreter: runs arbitrary code',
};

/** Families matched by pattern: python3.12, mkfs.ext4, perl5.36, … */
const FLOOR_PATTERNS: Array<[RegExp, string]> = [
  [/^python[0-9.]*$/, 'interpreter: runs arbitrary code'],
  [/^pypy[0-9.]*$/, 'interpreter: runs arbitrary code'],
  [/^perl[0-9.]+$/, 'interpreter: runs arbitrary code'],
  [/^ruby[0-9.]+$/, 'interpreter: runs arbitrary code'],
  [/^php[0-9.]+$/, 'interpreter: runs arbitrary code'],
  [/^mkfs(\..+)?$/, 'formats a device'],
  [/^(ba|da|k|mk|a|z|c|tc|fi)?sh[0-9.]+$/, 'shell: runs arbitrary code'],
  [/^(tclsh|wish|lua|luajit|node|nodejs|irb|julia)[0-9.]+$/, 'interpreter: runs arbitrary code'],
  [/^ld(-linux[\w.-]*)?\.so(\.\d+)*$|^ld-[\w.-]+\.so(\.\d+)*$/, 'the dynamic loader runs any program'],
  [/^mke2fs$|^mkdosfs$/, 'formats a device'],
];

export interface FloorHit {
  command: string;
  reason: string;
}

/** The first floor hit of an analysed command line, if any. */
export function floorHit(analysis: ShellAnalysis): FloorHit | undefined {
  const dev = analysis.deviceWrites[0];
  if (dev) return { command: `> ${dev}`, reason: dev.startsWith('/dev/') ? 'writes to a device' : 'writes a file that later runs commands (hooks, start-up or configuration files)' };
  for (const seg of analysis.segments) {
    for (const layer of seg.layers) {
      const hit = layerHit(layer);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** Whether one program invocation is on the floor. */
export function layerHit(layer: SegmentWords): FloorHit | undefined {
  const name = basename((layer.words[0] ?? '').normalize('NFKC'));
  const args = layer.words.slice(1);
  const direct = FLOOR_COMMANDS[name] ?? FLOOR_PATTERNS.find(([re]) => re.test(name))?.[1];
  if (direct) return { command: name, reason: direct };
  if (POSIX_SHELLS.has(name) && !args.some((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a))) {
    return { command: name, reason: 'shell: runs a script or its standard input' };
  }
  const target = startupWriteTarget(layer);
  if (target) return { command: `${name} ${target}`, reason: 'writes a file that later runs commands (hooks, start-up or configuration files)' };
  const special = argumentHit(name, layer);
  return special ? { command: special.command, reason: special.reason } : undefined;
}

function argumentHit(name: string, layer: SegmentWords): FloorHit | undefined {
  const args = layer.words.slice(1);
  const exec = execOptionReason(name, layer);
  if (exec) return { command: name, reason: exec };
  switch (name) {
    case 'git':
      return gitFloorReason(layer);
    case 'make':
    case 'gmake':
      if (args.some((a, i) => layer.dynamic[i + 1] || /^[A-Za-z_][\w.]*\s*[:+?!]?=/.test(a) || isLongOption(a, '--eval') || a === '-E' || /^-[A-Za-z]*E/.test(a) || a === '-f-' || ((a === '-f' || isLongOption(a, '--file') || isLongOption(a, '--makefile')) && ['-', '/dev/stdin'].includes(args[i + 1] ?? '')))) {
        return { command: name, reason: 'make arguments that define code (--eval, VAR=value, a makefile from standard input)' };
      }
      return undefined;
    case 'tee':
    case 'cp':
    case 'mv':
    case 'install':
    case 'ln':
    case 'truncate':
    case 'patch': {
      const target = args.find((x) => !x.startsWith('-') && isStartupPath(x));
      if (target) return { command: `${name} ${target}`, reason: 'writes a file that later runs commands (hooks, start-up or configuration files)' };
      return undefined;
    }
    case 'dd':
      if (args.some((a, i) => a.startsWith('of=/dev/') || (layer.dynamic[i + 1] && a.startsWith('of=')))) {
        return { command: 'dd of=/dev/…', reason: 'writes to a device' };
      }
      return undefined;
    case 'chmod':
    case 'chown':
    case 'chgrp':
      if (recursive(args) && args.some((a, i) => !a.startsWith('-') && (layer.dynamic[i + 1] || broadPath(a)))) {
        return { command: `${name} -R`, reason: 'changes ownership or modes of a whole tree' };
      }
      return undefined;
    case 'mapfile':
    case 'readarray':
    case 'complete':
    case 'compgen':
      if (args.some((a) => /^-[A-Za-z]*[CF]/.test(a))) return { command: `${name} -C`, reason: 'runs a callback command' };
      return undefined;
    case 'sed':
    case 'gsed':
      if (sedRuns(layer)) return { command: name, reason: 'sed script runs commands or writes files (e / w)' };
      return undefined;
    case 'tar':
    case 'gtar':
    case 'bsdtar':
      if (args.some((a, i) => TAR_EXEC.some((o) => isLongOption(a, o)) || (/^-[A-Za-z]/.test(a) && /[IF]/.test(a.slice(1).replace(/=.*$/, ''))) || (i === 0 && /^[A-Za-z]+$/.test(a) && /[IF]/.test(a)))) {
        return { command: `${name} --to-command`, reason: 'tar option runs commands' };
      }
      return undefined;
    case 'rsync':
      if (args.some((a) => /^-[A-Za-z]*e/.test(a) || isLongOption(a, '--rsh') || isLongOption(a, '--rsync-path'))) return { command: 'rsync -e', reason: 'rsync option runs commands' };
      if (args.some((a) => !a.startsWith('-') && isStartupPath(a))) return { command: 'rsync', reason: 'writes a file that later runs commands (hooks, start-up or configuration files)' };
      return undefined;
    case 'ssh':
    case 'scp':
    case 'sftp':
      if (args.some((a, i) => (/(ProxyCommand|LocalCommand|KnownHostsCommand|Match\s+exec)/i.test(a) && (a.startsWith('-o') || args[i - 1] === '-o')) || a === '-F' || /^-F./.test(a))) {
        return { command: `${name} -o …Command`, reason: 'ssh option runs local commands' };
      }
      return undefined;
    case 'find':
      if (args.includes('-delete')) return { command: 'find -delete', reason: 'deletes files' };
      return undefined;
    case 'npm':
    case 'pnpm':
    case 'yarn':
      if ((args[0] === 'config' && ['set', 'edit', 'delete'].includes(args[1] ?? '')) || args[0] === 'set') {
        return { command: `${name} config set`, reason: 'changes the shell and programs the package manager runs' };
      }
      return undefined;
    case 'systemctl':
      if (args.some((a) => ['poweroff', 'reboot', 'halt', 'kexec', 'suspend', 'hibernate', 'rescue', 'emergency'].includes(a))) {
        return { command: 'systemctl', reason: 'stops or restarts the machine' };
      }
      return undefined;
    case 'awk':
    case 'gawk':
    case 'mawk':
    case 'nawk':
      if (args.some((a, i) => layer.dynamic[i + 1] || /system|getline|\||@load|@include/.test(a) || /^-[A-Za-z]*[fEil]/.test(a) || ['--file', '--exec', '--include', '--load'].some((o) => isLongOption(a, o)))) {
        return { command: name, reason: 'awk program runs commands' };
      }
      return undefined;
    default:
      return undefined;
  }
}

/** Options naming a file or directory a program writes to. */
const WRITE_TARGET_OPTIONS = ['-o', '-O', '--output', '--output-document', '--log-file', '-C', '-d', '--directory', '-t', '--target-directory', '--output-file'];

/** A start-up file or directory given to a write-target option (`-o ~/.bashrc`, `of=…`, `--output=…`). */
function startupWriteTarget(layer: SegmentWords): string | undefined {
  const w = layer.words;
  for (let i = 1; i < w.length; i++) {
    const a = w[i] as string;
    const eq = a.indexOf('=');
    if (eq > 0 && (WRITE_TARGET_OPTIONS.includes(a.slice(0, eq)) || a.slice(0, eq) === 'of') && isStartupPath(a.slice(eq + 1))) return a;
    if (/^-[oO]./.test(a) && isStartupPath(a.slice(2))) return a;
    if (WRITE_TARGET_OPTIONS.includes(w[i - 1] ?? '') && isStartupPath(a)) return `${w[i - 1]} ${a}`;
  }
  return undefined;
}

/** tar options whose value is a command it runs. */
const TAR_EXEC = ['--to-command', '--checkpoint-action', '--use-compress-program', '--rsh-command', '--info-script', '--new-volume-script', '--rmt-command'];

/** A sed script with an `e` command or flag, a `w`/`W` command or flag, or one read from a file. */
function sedRuns(layer: SegmentWords): boolean {
  const args = layer.words.slice(1);
  let scripts: string[] = [];
  let explicit = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const dynamic = (k: number) => layer.dynamic[k + 1] === true;
    if (a === '-f' || a.startsWith('--file')) return true;
    if (a === '-e' || a === '--expression') {
      if (dynamic(i + 1)) return true;
      explicit = true;
      scripts.push(args[i + 1] ?? '');
      i += 1;
    } else if (a.startsWith('--expression=')) {
      if (dynamic(i)) return true;
      explicit = true;
      scripts.push(a.slice('--expression='.length));
    } else if (!a.startsWith('-') && !explicit && scripts.length === 0) {
      if (dynamic(i)) return true;
      scripts = [a];
    }
  }
  const command = /(^|[;{}\n])\s*[0-9$,/^.*\\!]*\s*[ewW](\s|$|;)/;
  const flag = /s(.)(?:(?!\1).|\\.)*\1(?:(?!\1).|\\.)*\1[gpiImM0-9]*[ewW]/;
  return scripts.some((s) => command.test(s) || flag.test(s));
}

function recursive(args: string[]): boolean {
  return args.some((a) => a === '--recursive' || /^-[A-Za-z]*R/.test(a));
}

/** `/`, `/*`, `/etc`, `~`, `~/`, `..`-escapes: a tree too broad to change recursively. */
function broadPath(p: string): boolean {
  const clean = p.replace(/\/+$/, '');
  return clean === '' || clean === '/*' || clean === '~' || clean === '~/*' || clean === '*' || /^\/[^/]*$/.test(clean);
}
