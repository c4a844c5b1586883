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
  /** The program runs other commands besides itself (find -exec). */
  | { kind: 'spawns'; via: string; commands: Words[] }
  | { kind: 'opaque'; reason: string };

/** Shells whose `-c` payload we re-parse with the bash grammar. */
export const POSIX_SHELLS = new Set(['sh', 'bash', 'dash', 'ash', 'ksh', 'mksh', 'rbash']);

/** Environment variables that change what a later command runs or loads. */
const SENSITIVE_VAR =
  /^(PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|IFS|PS[0-4]|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|BASH_FUNC_\S*|CDPATH|GLOBIGNORE|HOME|XDG_\w+|GIT_\w+|PAGER|MANPAGER|EDITOR|VISUAL|BROWSER|LESSOPEN|LESSCLOSE|NODE_OPTIONS|NODE_PATH|PYTHON\w*|PERL\w*|RUBY\w*|\w*ASKPASS|\w*_COMMAND|\w*_EDITOR|\w*_PAGER|NPM_CONFIG_\w+|npm_config_\w+)$/;

export function isSensitiveVariable(name: string): boolean {
  return SENSITIVE_VAR.test(name);
}

/** Last path component: `/usr/bin/rm` → `rm`. */
export function basename(word: string): string {
  const i = word.lastIndexOf('/');
  return i < 0 ? word : word.slice(i + 1);
}

interface OptionSpec {
  /** Options taking a value as the next word (or attached: `-n5`, `--signal=KILL`). */
  withValue: string[];
  /** Options without value; `*` accepts any other option starting with `-`. */
  flags: string[];
  /** Positional words consumed before the command (timeout's duration). */
  positional?: number;
  /** Options after which the program runs no command (e.g. `command -v`). */
  noCommand?: string[];
}

const SPECS: Record<string, OptionSpec> = {
  nice: { withValue: ['-n', '--adjustment'], flags: [] },
  nohup: { withValue: [], flags: [] },
  time: { withValue: ['-f', '--format', '-o', '--output'], flags: ['-p', '-v', '--verbose', '-a', '--append', '--portability'] },
  timeout: {
    withValue: ['-s', '--signal', '-k', '--kill-after'],
    flags: ['--foreground', '--preserve-status', '-v', '--verbose', '-f', '-p'],
    positional: 1,
  },
  stdbuf: { withValue: ['-i', '-o', '-e', '--input', '--output', '--error'], flags: [] },
  ionice: { withValue: ['-c', '-n', '--class', '--classdata'], flags: ['-t', '--ignore'], noCommand: ['-p', '-P', '-u'] },
  setsid: { withValue: [], flags: ['-f', '-w', '-c', '--fork', '--wait', '--ctty'] },
  command: { withValue: [], flags: ['-p'], noCommand: ['-v', '-V'] },
  builtin: { withValue: [], flags: [] },
  exec: { withValue: ['-a'], flags: ['-c', '-l'] },
  sudo: {
    withValue: ['-C', '-D', '-g', '-h', '-p', '-R', '-r', '-t', '-T', '-U', '-u', '--chdir', '--group', '--user', '--prompt', '--close-from', '--role', '--type', '--other-user', '--host', '--chroot', '--command-timeout'],
    flags: ['-A', '-b', '-E', '-H', '-n', '-P', '-S', '-k', '--preserve-env', '--non-interactive', '--stdin', '--set-home', '--background', '--askpass', '--'],
    noCommand: ['-e', '-l', '-v', '-V', '-K', '-i', '-s', '--edit', '--list', '--validate', '--login', '--shell'],
  },
  doas: { withValue: ['-u', '-C'], flags: ['-n', '-s'], noCommand: ['-L'] },
  xargs: {
    withValue: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--eof', '--replace', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    flags: ['-0', '-r', '-t', '-p', '-x', '-o', '--null', '--no-run-if-empty', '--verbose', '--interactive', '--exit', '--open-tty', '-i', '-l', '-e'],
  },
  busybox: { withValue: [], flags: [] },
  coproc: { withValue: [], flags: [] },
};

/** Splits one segment's words into wrapper, inline shell, find -exec, or a plain command. */
export function unwrap(seg: Words): Unwrapped {
  const name = basename(seg.words[0] ?? '');
  if (name === 'env') return unwrapEnv(seg);
  if (POSIX_SHELLS.has(name)) return unwrapShell(seg, name);
  if (name === 'eval') return evalPayload(seg);
  if (name === 'find') return findExec(seg);
  if (name === 'watch') return watchPayload(seg);
  const spec = SPECS[name];
  if (!spec) return { kind: 'plain' };
  return unwrapBySpec(seg, name, spec);
}

function sliceWords(seg: Words, from: number, trailing = seg.trailingDynamic): Words {
  return { words: seg.words.slice(from), dynamic: seg.dynamic.slice(from), trailingDynamic: trailing };
}

function unwrapBySpec(seg: Words, name: string, spec: OptionSpec): Unwrapped {
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
    if (!w.startsWith('-') || w === '-') break;
    const key = w.includes('=') ? w.slice(0, w.indexOf('=')) : w;
    if (spec.noCommand?.includes(key)) return { kind: 'plain' };
    if (spec.withValue.includes(key)) i += w.includes('=') ? 1 : 2;
    else if (spec.flags.includes(key)) i += 1;
    else if (spec.withValue.some((o) => o.length === 2 && w.startsWith(o))) i += 1;
    else if (name === 'nice' && /^-\d+$/.test(w)) i += 1;
    else return { kind: 'opaque', reason: `unknown option "${w}" of "${name}"` };
  }
  if (i >= seg.words.length) {
    if (name === 'xargs') return { kind: 'wrap', via: 'xargs', inner: { words: ['echo'], dynamic: [false], trailingDynamic: true } };
    return { kind: 'plain' };
  }
  return { kind: 'wrap', via: name, inner: sliceWords(seg, i, name === 'xargs' ? true : seg.trailingDynamic) };
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
