import { gitPayloads } from './git';

/**
 * Command wrappers: programs whose arguments are another command (`env`, `nice`, `timeout`,
 * `xargs`, `sudo`, …), inline shells whose `-c` argument is shell source (`sh -c`, `bash -c`,
 * `eval`), and `find -exec`. Pure: works on the words of one segment; `shell.ts` recurses.
 */

export interface Words {
  words: string[];
  dynamic: boolean[];
  trailingDynamic: boolean;
}

export type Unwrapped =
  | { kind: 'plain' }
  /** The same process runs `inner` (the wrapper itself is transparent for allow rules). */
  | { kind: 'wrap'; via: string; inner: Words }
  /** Shell source to parse again; `payload` undefined when it is only known at run time. */
  | { kind: 'shell'; via: string; payload?: string }
  /** The program runs other commands besides itself (find -exec; shell code for git -x). */
  | { kind: 'spawns'; via: string; commands: Words[]; shells?: Array<string | undefined> }
  | { kind: 'opaque'; reason: string };

/** Shells whose `-c` payload we re-parse with the bash grammar. */
export const POSIX_SHELLS = new Set(['sh', 'bash', 'dash', 'ash', 'ksh', 'mksh', 'rbash']);

/** Environment variables that change what a later command runs or loads. */
const SENSITIVE_VAR =
  /^(PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|IFS|PS[0-4]|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|BASH_FUNC_\S*|CDPATH|GLOBIGNORE|HOME|XDG_\w+|GIT_\w+|PAGER|MANPAGER|EDITOR|VISUAL|BROWSER|LESSOPEN|LESSCLOSE|NODE_OPTIONS|NODE_PATH|PYTHON\w*|PERL\w*|RUBY\w*|\w*ASKPASS|\w*_COMMAND|\w*_EDITOR|\w*_PAGER|NPM_CONFIG_\w+|npm_config_\w+|MAKEFLAGS|MFLAGS|MAKEFILES|GNUMAKEFLAGS|SHELL|TAR_OPTIONS|RSYNC_RSH|RSYNC_CONNECT_PROG|GIT_\w+|SSH_\w+|LESS|MANOPT|GZIP|AWKPATH|AWKLIBPATH|VIMINIT|EXINIT|MYVIMRC|EMACSLOADPATH|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|CLASSPATH)$/;

export function isSensitiveVariable(name: string): boolean {
  return SENSITIVE_VAR.test(name);
}

/**
 * Files whose contents a later program runs or loads as configuration that runs commands: git
 * hooks and config, shell start-up files, ssh, cron, systemd and autostart entries, editor,
 * debugger and tool rc files. Writing one is a deferred way to run a command.
 */
const STARTUP_PATH =
  /(^|\/)(\.git\/(hooks(\/|$)|config$|modules\/)|\.gitconfig$|\.config\/git\/|\.(bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|kshrc|cshrc|tcshrc|inputrc|envrc|xprofile|xinitrc|xsession|pam_environment|vimrc|exrc|gvimrc|gdbinit|npmrc|yarnrc|wgetrc|curlrc|netrc|pythonrc|irbrc|lesskey)$|\.ssh(\/|$)|\.config\/(fish|autostart|systemd|environment\.d)\/|\.local\/share\/systemd\/|\.vim\/|\.emacs(\.d\/|$)|\.config\/nvim\/|\.bash_aliases$|\.local\/bin\/)|^\/(etc|var\/spool\/cron|(usr\/(local\/)?)?s?bin)\/|^\$\{?HOME\}?\/bin\//;

export function isStartupPath(path: string): boolean {
  return STARTUP_PATH.test(path.replace(/^~(?=\/)/, ''));
}

/** Last path component: `/usr/bin/rm` → `rm`. */
export function basename(word: string): string {
  const i = word.lastIndexOf('/');
  return i < 0 ? word : word.slice(i + 1);
}

/**
 * How a wrapper's own options are read before the command it runs. Unknown options make the
 * segment opaque (never allowed by a rule).
 */
export interface WrapperSpec {
  /** Options taking a value as the next word (or attached: `-n5`, `--signal=KILL`). */
  withValue: string[];
  /** Options without value. */
  flags: string[];
  /** Positional words consumed before the command (timeout's duration, flock's lock file). */
  positional?: number;
  /** Options after which the program runs no command (e.g. `command -v`). */
  noCommand?: string[];
  /** Options whose value is shell source the program runs (`script -c`, `flock -c`, `su -c`). */
  shellOptions?: string[];
  /** The program takes no command words: only a shell option runs code (`script`, `su`). */
  commandless?: boolean;
  /** Without a command the program starts a shell reading its standard input. */
  bareShell?: boolean;
  /** Arguments are appended to the command at run time (`xargs`). */
  appends?: boolean;
  /** Every `--name=value` option is accepted (valgrind's options). */
  longAssignments?: boolean;
  /** Every `--name` and `--name=value` option is accepted, never with a separate value (firejail). */
  anyLongOption?: boolean;
  /** Options whose optional value is attached only (`prlimit -n64`, `--nofile=64`; `-n 64` runs `64`). */
  attached?: string[];
  /** Options taking several value words (`bwrap --bind SRC DEST`). */
  valueCount?: Readonly<Record<string, number>>;
  /** Options after which the command cannot be read from the words (`bwrap --args FD`). */
  opaqueOptions?: string[];
}

/**
 * Programs that run another program given as their arguments. The inner command is analysed
 * like one written directly (the floor and every rule see it); where it cannot be read, the
 * segment is opaque. Tested in wrappers.test.ts; keep docs/permissions.md in step.
 */
export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  nice: { withValue: ['-n', '--adjustment'], flags: [] },
  nohup: { withValue: [], flags: [] },
  time: { withValue: ['-f', '--format', '-o', '--output'], flags: ['-p', '-v', '--verbose', '-a', '--append', '--portability', '-q', '--quiet'] },
  timeout: {
    withValue: ['-s', '--signal', '-k', '--kill-after'],
    flags: ['--foreground', '--preserve-status', '-v', '--verbose', '-f', '-p'],
    positional: 1,
  },
  stdbuf: { withValue: ['-i', '-o', '-e', '--input', '--output', '--error'], flags: [] },
  ionice: { withValue: ['-c', '-n', '--class', '--classdata'], flags: ['-t', '--ignore'], noCommand: ['-p', '-P', '-u', '--pid', '--pgid', '--uid'] },
  setsid: { withValue: [], flags: ['-f', '-w', '-c', '--fork', '--wait', '--ctty'] },
  command: { withValue: [], flags: ['-p'], noCommand: ['-v', '-V'] },
  builtin: { withValue: [], flags: [] },
  exec: { withValue: ['-a'], flags: ['-c', '-l'] },
  sudo: {
    withValue: ['-C', '-D', '-g', '-h', '-p', '-R', '-r', '-t', '-T', '-U', '-u', '--chdir', '--group', '--user', '--prompt', '--close-from', '--role', '--type', '--other-user', '--host', '--chroot', '--command-timeout'],
    flags: ['-A', '-b', '-E', '-H', '-n', '-P', '-S', '-k', '--preserve-env', '--non-interactive', '--stdin', '--set-home', '--background', '--askpass'],
    noCommand: ['-e', '-l', '-v', '-V', '-K', '--edit', '--list', '--validate'],
    bareShell: true,
  },
  doas: { withValue: ['-u', '-C'], flags: ['-n'], noCommand: ['-L'], bareShell: true },
  pkexec: { withValue: ['--user'], flags: ['--disable-internal-agent', '--keep-cwd'], bareShell: true },
  su: {
    withValue: ['-g', '--group', '-G', '--supp-group', '-s', '--shell', '-w', '--whitelist-environment'],
    flags: ['-', '-l', '--login', '-m', '-p', '--preserve-environment', '-f', '--fast', '-P', '--pty'],
    shellOptions: ['-c', '--command', '--session-command'],
    commandless: true,
    bareShell: true,
  },
  runuser: {
    withValue: ['-u', '--user', '-g', '--group', '-G', '--supp-group', '-s', '--shell', '-w', '--whitelist-environment'],
    flags: ['-', '-l', '--login', '-m', '-p', '--preserve-environment', '-f', '--fast', '-P', '--pty'],
    shellOptions: ['-c', '--command', '--session-command'],
    bareShell: true,
  },
  xargs: {
    withValue: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    flags: ['-0', '-r', '-t', '-p', '-x', '-o', '--null', '--no-run-if-empty', '--verbose', '--interactive', '--exit', '--open-tty', '-i', '-l', '-e'],
    appends: true,
  },
  busybox: { withValue: [], flags: [] },
  toybox: { withValue: [], flags: [] },
  entr: { withValue: [], flags: ['-a', '-c', '-cc', '-d', '-n', '-p', '-r', '-z'] },
  coproc: { withValue: [], flags: [] },
  flock: {
    withValue: ['-w', '--timeout', '-E', '--conflict-exit-code'],
    flags: ['-s', '--shared', '-x', '-e', '--exclusive', '-u', '--unlock', '-n', '--nb', '--nonblock', '-o', '--close', '-F', '--no-fork', '--verbose'],
    positional: 1,
    shellOptions: ['-c', '--command'],
  },
  strace: {
    withValue: ['-e', '-o', '-p', '-s', '-u', '-a', '-b', '-E', '-I', '-P', '-S', '-X', '-O', '-U', '--trace', '--output', '--attach', '--string-limit', '--user', '--signal', '--status', '--env', '--trace-path', '--summary-sort-by'],
    flags: ['-f', '-ff', '-c', '-C', '-d', '-D', '-DD', '-F', '-i', '-k', '-q', '-qq', '-r', '-t', '-tt', '-ttt', '-T', '-v', '-w', '-x', '-xx', '-y', '-yy', '-z', '-Z', '-n', '--follow-forks', '--output-separately', '--summary-only', '--summary', '--no-abbrev', '--successful-only', '--failed-only', '--quiet'],
  },
  ltrace: {
    withValue: ['-e', '-o', '-p', '-s', '-u', '-a', '-A', '-D', '-F', '-l', '-n', '--output', '--library', '--align', '--indent', '--config'],
    flags: ['-b', '-c', '-C', '-f', '-i', '-L', '-r', '-S', '-t', '-tt', '-ttt', '-T', '-w', '--demangle', '--no-signals'],
  },
  script: {
    withValue: ['-E', '--echo', '-T', '--log-timing', '-I', '--log-in', '-O', '--log-out', '-B', '--log-io', '-m', '--logging-format', '-t', '--timing'],
    flags: ['-a', '--append', '-e', '--return', '-f', '--flush', '-q', '--quiet', '--force'],
    shellOptions: ['-c', '--command'],
    commandless: true,
    bareShell: true,
  },
  chroot: { withValue: ['--userspec', '--groups'], flags: ['--skip-chdir'], positional: 1, bareShell: true },
  unshare: {
    withValue: ['-S', '--setuid', '-G', '--setgid', '--propagation', '-R', '--root', '-w', '--wd', '--map-user', '--map-group', '--map-users', '--map-groups', '--monotonic', '--boottime'],
    flags: ['-m', '-u', '-i', '-n', '-p', '-U', '-C', '-T', '-f', '-r', '-c', '--mount', '--uts', '--ipc', '--net', '--pid', '--user', '--cgroup', '--time', '--fork', '--map-root-user', '--map-current-user', '--kill-child', '--mount-proc', '--keep-caps', '--map-auto'],
    bareShell: true,
  },
  nsenter: {
    withValue: ['-t', '--target', '-S', '--setuid', '-G', '--setgid', '-w', '--wd', '-r', '--root'],
    flags: ['-a', '--all', '-m', '-u', '-i', '-n', '-p', '-U', '-C', '-T', '-F', '--no-fork', '--preserve-credentials', '-Z', '--mount', '--uts', '--ipc', '--net', '--pid', '--user', '--cgroup', '--time'],
    bareShell: true,
  },
  taskset: { withValue: [], flags: ['-a', '--all-tasks', '-c', '--cpu-list'], noCommand: ['-p', '--pid'], positional: 1 },
  chrt: { withValue: ['-T', '-P', '-D', '--sched-runtime', '--sched-period', '--sched-deadline'], flags: ['-b', '-d', '-f', '-i', '-o', '-r', '-R', '-a', '-v', '--batch', '--deadline', '--fifo', '--idle', '--other', '--rr', '--reset-on-fork', '--all-tasks', '--verbose'], noCommand: ['-p', '--pid', '-m', '--max'], positional: 1 },
  faketime: { withValue: ['-p'], flags: ['-f', '-m', '--exclude-monotonic'], positional: 1 },
  valgrind: { withValue: [], flags: ['-q', '-v', '--quiet', '--verbose'], longAssignments: true },
  eatmydata: { withValue: [], flags: [] },
  nocache: { withValue: [], flags: [] },
  catchsegv: { withValue: [], flags: [] },
  unbuffer: { withValue: [], flags: ['-p'] },
  'dbus-run-session': { withValue: ['--config-file', '--dbus-daemon'], flags: [] },
  'ssh-agent': { withValue: ['-a', '-E', '-P', '-t'], flags: ['-D', '-d'], noCommand: ['-k', '-s', '-c'] },
  'xvfb-run': { withValue: ['-n', '--server-num', '-s', '--server-args', '-f', '--auth-file', '-e', '--error-file', '-p', '--xauth-protocol', '-w', '--wait'], flags: ['-a', '--auto-servernum', '-d', '--auto-display'] },
  proxychains: { withValue: ['-f'], flags: ['-q'] },
  proxychains4: { withValue: ['-f'], flags: ['-q'] },
  torsocks: { withValue: ['-u', '-p', '-a', '-P'], flags: ['-i', '-d', '-q', '--isolate'], noCommand: ['--shell'] },
  fakeroot: { withValue: ['-l', '--lib', '--faked', '-s', '-i', '-b'], flags: ['-u', '--unknown-is-real'], bareShell: true },
  prlimit: {
    withValue: ['-o', '--output'],
    flags: ['--noheadings', '--raw', '--verbose'],
    attached: ['-c', '-d', '-e', '-f', '-i', '-l', '-m', '-n', '-q', '-r', '-s', '-t', '-u', '-v', '-x', '-y', '--core', '--data', '--nice', '--fsize', '--sigpending', '--memlock', '--rss', '--nofile', '--msgqueue', '--rtprio', '--stack', '--cpu', '--nproc', '--as', '--locks', '--rttime'],
    noCommand: ['-p', '--pid', '-h', '--help', '-V', '--version'],
  },
  bwrap: {
    withValue: ['--argv0', '--userns', '--userns2', '--pidns', '--uid', '--gid', '--hostname', '--chdir', '--unsetenv', '--lock-file', '--sync-fd', '--remount-ro', '--exec-label', '--file-label', '--proc', '--dev', '--tmpfs', '--mqueue', '--dir', '--seccomp', '--add-seccomp-fd', '--block-fd', '--userns-block-fd', '--info-fd', '--json-status-fd', '--cap-add', '--cap-drop', '--perms', '--size', '--overlay-src', '--tmp-overlay', '--ro-overlay'],
    flags: ['--unshare-all', '--share-net', '--unshare-user', '--unshare-user-try', '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup', '--unshare-cgroup-try', '--disable-userns', '--assert-userns-disabled', '--clearenv', '--new-session', '--die-with-parent', '--as-pid-1'],
    valueCount: {
      '--setenv': 2, '--bind': 2, '--bind-try': 2, '--dev-bind': 2, '--dev-bind-try': 2, '--ro-bind': 2, '--ro-bind-try': 2, '--bind-fd': 2,
      '--ro-bind-fd': 2, '--file': 2, '--bind-data': 2, '--ro-bind-data': 2, '--symlink': 2, '--chmod': 2, '--overlay': 3,
    },
    noCommand: ['--help', '--version'],
    opaqueOptions: ['--args'],
  },
  setpriv: {
    withValue: ['--ambient-caps', '--inh-caps', '--bounding-set', '--ruid', '--euid', '--rgid', '--egid', '--reuid', '--regid', '--groups', '--securebits', '--pdeathsig', '--selinux-label', '--apparmor-profile', '--landlock-access', '--landlock-rule', '--seccomp-filter'],
    flags: ['--nnp', '--no-new-privs', '--clear-groups', '--keep-groups', '--init-groups', '--reset-env'],
    noCommand: ['-d', '--dump', '--list-caps', '-h', '--help', '-V', '--version'],
  },
  firejail: { withValue: [], flags: [], anyLongOption: true, bareShell: true },
  cpulimit: { withValue: ['-l', '--limit', '-c', '--cpu'], flags: ['-z', '--lazy', '-i', '--include-children', '-m', '--monitor-forks', '-q', '--quiet', '-v', '--verbose', '-r', '--restore'], noCommand: ['-p', '--pid', '-e', '--exe', '-P', '--path'] },
  numactl: {
    withValue: ['-N', '-m', '-C', '-i', '-p', '-w', '--cpunodebind', '--membind', '--physcpubind', '--interleave', '--preferred', '--preferred-many', '--weighted-interleave'],
    flags: ['-a', '-b', '-l', '--all', '--balancing', '--localalloc', '--huge', '--touch', '--strict', '--offset', '--length', '--shmmode', '--shm', '--file', '-t', '-T', '--shmid'],
    noCommand: ['-s', '--show', '-H', '--hardware'],
  },
  setarch: { withValue: [], flags: ['-R', '-L', '-B', '-X', '-Z', '-T', '-S', '-3', '-v', '--verbose', '--uname-2.6', '--addr-no-randomize', '--addr-compat-layout', '--read-implies-exec', '--32bit', '--fdpic-funcptrs', '--short-inode', '--whole-seconds', '--sticky-timeouts', '--3gb', '--4gb', '--mmap-page-zero'], positional: 1, bareShell: true },
  linux32: { withValue: [], flags: ['-R', '-L', '-B', '-X', '-Z', '-T', '-S', '-3', '--addr-no-randomize', '--uname-2.6'], bareShell: true },
  linux64: { withValue: [], flags: ['-R', '-L', '-B', '-X', '-Z', '-T', '-S', '-3', '--addr-no-randomize', '--uname-2.6'], bareShell: true },
  cgexec: { withValue: ['-g'], flags: ['--sticky'] },
  gosu: { withValue: [], flags: [], positional: 1 },
  'su-exec': { withValue: [], flags: [], positional: 1 },
  setuidgid: { withValue: [], flags: [], positional: 1 },
  chpst: { withValue: ['-u', '-U', '-b', '-e', '-/', '-n', '-l', '-L', '-m', '-d', '-o', '-p', '-f', '-c', '-r', '-t'], flags: ['-P', '-0', '-1', '-2', '-v'] },
  tini: { withValue: ['-e', '-p'], flags: ['-s', '-v', '-vv', '-vvv', '-w', '-g', '-l'] },
  'dumb-init': { withValue: ['-r', '--rewrite'], flags: ['-c', '--single-child', '-v', '--verbose'] },
  sshpass: { withValue: ['-p', '-f', '-d', '-P'], flags: ['-e', '-v'] },
  'dbus-launch': { withValue: ['--config-file', '--autolaunch'], flags: ['--exit-with-session', '--exit-with-x11', '--sh-syntax', '--csh-syntax', '--binary-syntax', '--close-stderr'] },
  'systemd-inhibit': { withValue: ['--what', '--who', '--why', '--mode'], flags: ['--no-pager', '--no-legend', '--no-ask-password'], noCommand: ['--list'] },
  chronic: { withValue: [], flags: ['-e', '-v'] },
  ifne: { withValue: [], flags: ['-n'] },
  rlwrap: { withValue: [], flags: [], anyLongOption: true },
  'systemd-run': {
    withValue: ['-p', '--property', '-u', '--unit', '-E', '--setenv', '--description', '--slice', '--uid', '--gid', '--nice', '-M', '--machine', '-H', '--host', '--working-directory', '--on-active', '--on-boot', '--on-calendar'],
    flags: ['--user', '--system', '--scope', '--wait', '-P', '--pipe', '-q', '--quiet', '-t', '--pty', '-G', '--collect', '--no-block', '-r', '--remain-after-exit', '--same-dir', '--no-ask-password'],
    noCommand: ['-S', '--shell'],
  },
};

/** Shell builtins and programs that run their arguments as commands, by name (for deny rules). */
export function isWrapper(name: string): boolean {
  return name in WRAPPERS || name === 'env' || name === 'toybox' || name === 'watch' || name === 'eval' || POSIX_SHELLS.has(name) || name === 'sg';
}

/** Splits one segment's words into wrapper, inline shell, find -exec, or a plain command. */
export function unwrap(seg: Words): Unwrapped {
  const name = basename(seg.words[0] ?? '');
  if (name === 'env') return unwrapEnv(seg);
  if (POSIX_SHELLS.has(name)) return unwrapShell(seg, name);
  if (name === 'eval') return evalPayload(seg);
  if (name === 'find') return findExec(seg);
  if (name === 'watch') return watchPayload(seg);
  if (name === 'sg') return sgPayload(seg);
  if (name === 'git') {
    const shells = gitPayloads(seg);
    return shells.length ? { kind: 'spawns', via: 'git', commands: [], shells } : { kind: 'plain' };
  }
  if (name === 'coproc' && seg.words.slice(1, 3).some((w) => w === '{' || w === '(' || w.startsWith('('))) {
    return { kind: 'opaque', reason: '"coproc" with a compound command the grammar does not parse' };
  }
  const spec = WRAPPERS[name];
  if (!spec) return { kind: 'plain' };
  return unwrapBySpec(seg, name, spec);
}

function sliceWords(seg: Words, from: number, trailing = seg.trailingDynamic): Words {
  return { words: seg.words.slice(from), dynamic: seg.dynamic.slice(from), trailingDynamic: trailing };
}

function unwrapBySpec(seg: Words, name: string, spec: WrapperSpec): Unwrapped {
  let i = 1;
  let positional = spec.positional ?? 0;
  while (i < seg.words.length) {
    if (seg.dynamic[i]) return { kind: 'opaque', reason: `"${name}" has an argument known only at run time before its command` };
    const w = seg.words[i] as string;
    if (w === '--') {
      i += 1;
      break;
    }
    if (positional > 0 && !w.startsWith('-')) {
      positional -= 1;
      i += 1;
      continue;
    }
    if (!w.startsWith('-') || (w === '-' && !spec.flags.includes('-'))) {
      if (!spec.commandless) break;
      i += 1;
      continue;
    }
    const key = w.includes('=') ? w.slice(0, w.indexOf('=')) : w;
    if (spec.noCommand?.includes(key)) return { kind: 'plain' };
    if (spec.opaqueOptions?.includes(key)) return { kind: 'opaque', reason: `"${name} ${key}" reads its command from elsewhere` };
    const count = spec.valueCount?.[key];
    if (count !== undefined) {
      if (seg.dynamic.slice(i + 1, i + 1 + count).some(Boolean)) return { kind: 'opaque', reason: `"${name}" has an argument known only at run time before its command` };
      i += 1 + count;
      continue;
    }
    if (spec.shellOptions?.includes(key)) {
      const p = w.includes('=') ? i : i + 1;
      if (p >= seg.words.length) return { kind: 'opaque', reason: `"${name} ${key}" without a command` };
      if (seg.dynamic[p]) return { kind: 'shell', via: `${name} ${key}` };
      return { kind: 'shell', via: `${name} ${key}`, payload: w.includes('=') ? w.slice(w.indexOf('=') + 1) : (seg.words[p] as string) };
    }
    if (spec.withValue.includes(key)) i += w.includes('=') ? 1 : 2;
    else if (spec.flags.includes(key)) i += 1;
    else if (spec.withValue.some((o) => o.length === 2 && w.startsWith(o))) i += 1;
    else if (spec.longAssignments && /^--[\w-]+=/.test(w)) i += 1;
    else if (spec.anyLongOption && /^--[\w-]+(=|$)/.test(w)) i += 1;
    else if (spec.attached?.some((o) => key === o || (o.length === 2 && w.startsWith(o)))) i += 1;
    else if (name === 'nice' && /^-\d+$/.test(w)) i += 1;
    else return { kind: 'opaque', reason: `unknown option "${w}" of "${name}"` };
  }
  if (spec.commandless || i >= seg.words.length) {
    if (spec.appends) return { kind: 'wrap', via: name, inner: { words: ['echo'], dynamic: [false], trailingDynamic: true } };
    if (spec.bareShell) return { kind: 'opaque', reason: `"${name}" without a command starts a shell reading its input` };
    return { kind: 'plain' };
  }
  return { kind: 'wrap', via: name, inner: sliceWords(seg, i, spec.appends ? true : seg.trailingDynamic) };
}

/** `sg group -c 'cmd'` / `sg group 'cmd'`: the command is shell source. */
function sgPayload(seg: Words): Unwrapped {
  let i = 1;
  if (seg.words[i] === '-') i += 1;
  i += 1; // the group
  if (seg.words[i] === '-c') i += 1;
  if (i >= seg.words.length) return { kind: 'opaque', reason: '"sg" without a command starts a shell' };
  if (seg.dynamic.slice(1, i + 1).some(Boolean)) return { kind: 'shell', via: 'sg' };
  return { kind: 'shell', via: 'sg', payload: seg.words.slice(i).join(' ') };
}

function unwrapEnv(seg: Words): Unwrapped {
  let i = 1;
  while (i < seg.words.length) {
    if (seg.dynamic[i]) return { kind: 'opaque', reason: '"env" has an argument known only at run time before its command' };
    const w = seg.words[i] as string;
    if (w === '--') {
      i += 1;
      break;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      const varName = w.slice(0, w.indexOf('='));
      if (isSensitiveVariable(varName)) return { kind: 'opaque', reason: `env sets ${varName}, which changes what commands run` };
      i += 1;
    } else if (['-i', '-0', '-v', '--ignore-environment', '--null', '--debug', '-'].includes(w)) i += 1;
    else if (['-u', '-C', '--unset', '--chdir'].includes(w)) i += 2;
    else if (/^(-u.+|-C.+|--unset=.*|--chdir=.*)$/.test(w)) i += 1;
    else if (w.startsWith('-S') || w.startsWith('--split-string')) return { kind: 'opaque', reason: '"env -S" splits a string into a command' };
    else if (w.startsWith('-')) return { kind: 'opaque', reason: `unknown option "${w}" of "env"` };
    else break;
  }
  if (i >= seg.words.length) return { kind: 'plain' };
  return { kind: 'wrap', via: 'env', inner: sliceWords(seg, i) };
}

/** `sh [opts] -c 'payload' [$0 args…]`; a shell without -c runs a script or stdin (floor). */
function unwrapShell(seg: Words, name: string): Unwrapped {
  for (let i = 1; i < seg.words.length; i++) {
    if (seg.dynamic[i]) return { kind: 'opaque', reason: `"${name}" has an option known only at run time` };
    const w = seg.words[i] as string;
    if (w === '-o' || w === '+o' || w === '-O' || w === '+O' || w === '--rcfile' || w === '--init-file') {
      i += 1;
      continue;
    }
    if (/^[-+][A-Za-z]*c[A-Za-z]*$/.test(w) && w.startsWith('-')) {
      const p = i + 1;
      if (p >= seg.words.length) return { kind: 'opaque', reason: `"${name} -c" without a command` };
      if (seg.dynamic[p]) return { kind: 'shell', via: `${name} -c` };
      return { kind: 'shell', via: `${name} -c`, payload: seg.words[p] as string };
    }
    if (w.startsWith('-') || w.startsWith('+')) continue;
    break;
  }
  return { kind: 'plain' };
}

function evalPayload(seg: Words): Unwrapped {
  if (seg.words.length < 2) return { kind: 'plain' };
  if (seg.dynamic.slice(1).some(Boolean) || seg.trailingDynamic) return { kind: 'shell', via: 'eval' };
  return { kind: 'shell', via: 'eval', payload: seg.words.slice(1).join(' ') };
}

/** `watch [opts] cmd…` runs its words through `sh -c`. */
function watchPayload(seg: Words): Unwrapped {
  let i = 1;
  while (i < seg.words.length && (seg.words[i] as string).startsWith('-')) {
    const w = seg.words[i] as string;
    i += ['-n', '-d', '--interval', '-q', '--equexit'].includes(w) ? 2 : 1;
  }
  if (i >= seg.words.length) return { kind: 'plain' };
  if (seg.dynamic.slice(i).some(Boolean)) return { kind: 'shell', via: 'watch' };
  return { kind: 'shell', via: 'watch', payload: seg.words.slice(i).join(' ') };
}

/** `find … -exec cmd {} ;` / `-execdir` / `-ok` / `-okdir`: each is a further command. */
function findExec(seg: Words): Unwrapped {
  const commands: Words[] = [];
  for (let i = 1; i < seg.words.length; i++) {
    const w = seg.words[i] as string;
    if (seg.dynamic[i] || !['-exec', '-execdir', '-ok', '-okdir'].includes(w)) continue;
    const start = i + 1;
    let end = start;
    while (end < seg.words.length && !(seg.words[end] === ';' || (seg.words[end] === '+' && seg.words[end - 1] === '{}'))) end++;
    if (end >= seg.words.length) return { kind: 'opaque', reason: `"find ${w}" without a closing ";" or "+"` };
    if (end === start) return { kind: 'opaque', reason: `"find ${w}" without a command` };
    const words = seg.words.slice(start, end);
    const dynamic = seg.dynamic.slice(start, end).map((d, k) => d || words[k]?.includes('{}') === true);
    commands.push({ words, dynamic, trailingDynamic: seg.words[end] === '+' });
    i = end;
  }
  return commands.length ? { kind: 'spawns', via: 'find -exec', commands } : { kind: 'plain' };
}
