import type { SegmentWords } from './rules';

/**
 * git as the permission rules see it. Global options come before the subcommand and are
 * skipped when matching deny/ask rules (`git -C x --no-pager push` is `git push` for
 * `Command(git push:*)`); git features that run a command, load code or write a file the caller
 * names are on the dangerous-command floor. Data first, then the pure functions reading it.
 * Long options also match their unambiguous abbreviations, as git's option parser accepts
 * them (`--exe` is `--exec`).
 */

/** Global options taking a value (`-C dir`, `--git-dir=x` or `--git-dir x`). */
export const GIT_GLOBAL_WITH_VALUE = ['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--attr-source', '--list-cmds'];

/** Global flags (an unknown `-…` before the subcommand is skipped as a flag, too). */
export const GIT_GLOBAL_FLAGS = [
  '-p', '--paginate', '-P', '--no-pager', '--bare', '--no-replace-objects', '--literal-pathspecs', '--glob-pathspecs',
  '--noglob-pathspecs', '--icase-pathspecs', '--no-optional-locks', '--no-advice', '--no-lazy-fetch', '--exec-path',
  '--html-path', '--man-path', '--info-path', '--version', '--help', '-v', '-h',
];

/**
 * Configuration keys (lower case) known to change only how git formats, compares or names
 * things. Any other key given to `git -c`, `git clone -c/--config` or written by `git config`
 * is on the floor: git runs the values of many keys (`core.pager`, `core.fsmonitor`,
 * `core.sshCommand`, `alias.*` with `!`, `diff.external`, `*.textconv`, `credential.helper`,
 * `filter.*`, `merge.*.driver`, `pager.*`, `interactive.diffFilter`, `sendemail.*`,
 * `remote.*.uploadpack`, `include.path`, `init.templateDir`, `core.hooksPath`, …).
 */
export const GIT_SAFE_CONFIG =
  /^(user\.(name|email|signingkey)|color\..+|column\..+|advice\..+|core\.(quotepath|autocrlf|eol|safecrlf|filemode|ignorecase|abbrev|whitespace|precomposeunicode|longpaths|symlinks|logallrefupdates|compression|bigfilethreshold|checkstat|trustctime|untrackedcache|commentchar|commentstring)|init\.defaultbranch|log\.(date|decorate|abbrevcommit|follow|showroot|mailmap)|format\.(pretty|subjectprefix|numbered|signoff|suffix|coverletter|thread)|pretty\.[^.]+|diff\.(renames|renamelimit|algorithm|colormoved|colormovedws|nopattern|mnemonicprefix|noprefix|relative|context|interhunkcontext|indentheuristic|statgraphwidth|suppressblankempty|wserrorhighlight|dirstat|ignoresubmodules|srcprefix|dstprefix)|merge\.(conflictstyle|ff|log|renames|renamelimit|stat|autostash|verbosity|directoryrenames)|pull\.(rebase|ff)|fetch\.(prune|prunetags|parallel|writecommitgraph|showforcedupdates|output)|rebase\.(autosquash|autostash|stat|missingcommitscheck|abbreviatecommands|updaterefs|forkpoint)|commit\.(verbose|cleanup|status)|tag\.sort|branch\.(sort|autosetupmerge|autosetuprebase)|versionsort\..+|status\.(short|branch|showstash|showuntrackedfiles|relativepaths|aheadbehind|renames|renamelimit)|grep\.(linenumber|column|patterntype|extendedregexp|fullname|threads)|protocol\.version|gc\.(auto|autodetach|autopacklimit)|maintenance\.auto|i18n\..+|push\.(default|followtags|autosetupremote)|blame\.(date|coloring|showemail|showroot|blankboundary)|pack\.threads)$/;

export function gitSafeConfigKey(key: string): boolean {
  return GIT_SAFE_CONFIG.test(key.toLowerCase());
}

/** Subcommands that are on the floor whatever their arguments. */
export const GIT_FLOOR_SUBCOMMANDS: Readonly<Record<string, string>> = {
  push: 'publishes commits to a remote',
  'filter-branch': 'runs its filters as shell code and rewrites history',
  'send-email': 'sends mail and runs the commands its options name',
  instaweb: 'starts a web server that runs commands',
  daemon: 'serves repositories and runs access hooks',
  credential: 'reads or stores credentials through helper programs',
  'credential-store': 'reads or stores credentials',
  'credential-cache': 'reads or stores credentials',
};

/** Options (per subcommand, `*` for every subcommand) whose value git runs as a command. */
export const GIT_EXEC_OPTIONS: Readonly<Record<string, { short?: string[]; long?: string[] }>> = {
  rebase: { short: ['-x'], long: ['--exec'] },
  difftool: { short: ['-x'], long: ['--extcmd'] },
  mergetool: { long: ['--extcmd'] },
  grep: { short: ['-O'], long: ['--open-files-in-pager'] },
  clone: { short: ['-u'], long: ['--upload-pack', '--template'] },
  'ls-remote': { short: ['-u'], long: ['--upload-pack'] },
  fetch: { long: ['--upload-pack'] },
  pull: { long: ['--upload-pack'] },
  archive: { long: ['--exec'] },
  init: { long: ['--template'] },
  '*': { long: ['--receive-pack', '--upload-pack', '--exec'] },
};

/** Options of the log/diff family that write to a file the caller names. */
export const GIT_OUTPUT_SUBCOMMANDS = new Set(['archive', 'log', 'diff', 'show', 'whatchanged', 'format-patch', 'range-diff', 'diff-tree', 'diff-index', 'diff-files', 'stash', 'reflog']);

export interface GitView {
  /** Index of the subcommand word; -1 when there is none. */
  index: number;
  /** The subcommand; undefined when only known at run time. */
  sub: string | undefined;
  /** `-c key=value` values and `--config-env` / `--exec-path=` uses among the global options. */
  configs: Array<string | undefined>;
  execPath: boolean;
}

/** Splits git's global options from the subcommand. */
export function gitView(layer: SegmentWords): GitView {
  const view: GitView = { index: -1, sub: undefined, configs: [], execPath: false };
  const w = layer.words;
  for (let i = 1; i < w.length; i++) {
    if (layer.dynamic[i]) return { ...view, index: i };
    const word = w[i] as string;
    const key = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
    if (key === '--config-env') view.configs.push(undefined);
    if (key === '--exec-path' && word.includes('=')) view.execPath = true;
    if (GIT_GLOBAL_WITH_VALUE.includes(key)) {
      if (word.includes('=')) continue;
      if (word === '-c') view.configs.push(layer.dynamic[i + 1] ? undefined : w[i + 1]);
      i += 1;
      continue;
    }
    if (word.startsWith('-c') && word.length > 2) {
      view.configs.push(word.slice(2));
      continue;
    }
    if (word.startsWith('-')) continue;
    return { ...view, index: i, sub: word };
  }
  return view;
}

/** `git <sub> <args>` without global options, for deny/ask rules; undefined when there are none. */
export function gitCanonical(layer: SegmentWords): SegmentWords | undefined {
  const view = gitView(layer);
  if (view.index <= 1) return undefined;
  return {
    words: [layer.words[0] as string, ...layer.words.slice(view.index)],
    dynamic: [layer.dynamic[0] === true, ...layer.dynamic.slice(view.index)],
    trailingDynamic: layer.trailingDynamic,
  };
}

/** Whether `word` is the long option `name` (or an abbreviation of it), with or without `=value`. */
export function isLongOption(word: string, name: string): boolean {
  if (!word.startsWith('--')) return false;
  const key = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
  return key.length >= 5 && name.startsWith(key);
}

/** Whether `word` is the short option `name`, alone, with an attached value, or in a cluster of flags. */
function isShortOption(word: string, name: string): boolean {
  return /^-[A-Za-z]/.test(word) && !word.startsWith('--') && (word === name || word.startsWith(name) || word.slice(1).includes(name.slice(1)));
}

/** Why an invocation of git is on the floor, if it is. */
export function gitFloorReason(layer: SegmentWords): { command: string; reason: string } | undefined {
  const view = gitView(layer);
  if (view.index < 0 && layer.trailingDynamic) return { command: 'git', reason: 'git subcommand known only at run time' };
  for (const c of view.configs) {
    if (c === undefined) return { command: 'git -c', reason: 'configuration known only at run time can run commands' };
    const key = c.split('=')[0] as string;
    if (!gitSafeConfigKey(key)) return { command: `git -c ${key}`, reason: 'git configuration that can run commands' };
  }
  if (view.execPath) return { command: 'git --exec-path', reason: 'runs git programs from another directory' };
  if (view.index < 0) return undefined;
  if (view.sub === undefined) return { command: 'git', reason: 'git subcommand known only at run time' };
  const sub = view.sub;
  const args = layer.words.slice(view.index + 1);
  const dyn = (k: number) => layer.dynamic[view.index + 1 + k] === true;
  const whole = GIT_FLOOR_SUBCOMMANDS[sub];
  if (whole) return { command: `git ${sub}`, reason: whole };
  if (args.some((a) => /(^|[\s'"=])ext::/.test(a))) return { command: 'git ext::', reason: 'the ext:: transport runs a command' };
  if (sub === 'submodule' && args.includes('foreach')) return { command: 'git submodule foreach', reason: 'runs a command in every submodule' };
  if (sub === 'bisect' && args.includes('run')) return { command: 'git bisect run', reason: 'runs a command at every step' };
  const exec = [GIT_EXEC_OPTIONS[sub], GIT_EXEC_OPTIONS['*']];
  for (const a of args) {
    for (const spec of exec) {
      const hit = spec?.short?.find((s) => isShortOption(a, s)) ?? spec?.long?.find((l) => isLongOption(a, l));
      if (hit) return { command: `git ${sub} ${hit}`, reason: 'the option runs a command' };
    }
  }
  if (GIT_OUTPUT_SUBCOMMANDS.has(sub) && args.some((a) => isLongOption(a, '--output'))) {
    return { command: `git ${sub} --output`, reason: 'writes to a file the command names' };
  }
  if (sub === 'clone' || sub === 'submodule') {
    for (let k = 0; k < args.length; k++) {
      const a = args[k] as string;
      const value = a === '-c' || a === '--config' ? (dyn(k + 1) ? undefined : (args[k + 1] ?? '')) : isLongOption(a, '--config') && a.includes('=') ? a.slice(a.indexOf('=') + 1) : a.startsWith('-c') && a.length > 2 ? a.slice(2) : null;
      if (value === null) continue;
      if (value === undefined || !gitSafeConfigKey(value.split('=')[0] as string)) return { command: `git ${sub} -c`, reason: 'git configuration that can run commands' };
    }
  }
  if (sub === 'config') return gitConfigWrite(args, dyn);
  if (GIT_DYNAMIC_RISK.has(sub)) {
    let afterDashes = false;
    for (let k = 0; k < args.length; k++) {
      const a = args[k] as string;
      if (!dyn(k)) {
        if (a === '--') afterDashes = true;
        continue;
      }
      if (afterDashes || (!dyn(k - 1) && GIT_VALUED.includes(args[k - 1] ?? ''))) continue;
      const key = /^--?[A-Za-z][\w-]*=/.exec(a)?.[0].slice(0, -1);
      if (key && !['--output', '--exec', '--upload-pack', '--receive-pack', '--template', '--extcmd', '--open-files-in-pager', '--config'].some((o) => isLongOption(key, o))) continue;
      return { command: `git ${sub}`, reason: 'an argument known only at run time can be an option that runs a command' };
    }
    if (layer.trailingDynamic) return { command: `git ${sub}`, reason: 'arguments appended at run time can be options that run a command' };
  }
  return undefined;
}

/** Subcommands with exec, output or config options: an argument only known at run time may be one. */
const GIT_DYNAMIC_RISK = new Set([
  ...Object.keys(GIT_EXEC_OPTIONS).filter((k) => k !== '*'),
  ...GIT_OUTPUT_SUBCOMMANDS,
  'submodule', 'bisect', 'remote', 'config', 'push',
]);

/** Options whose run-time value cannot turn into another option. */
const GIT_VALUED = ['-m', '--message', '-b', '-B', '--branch', '--author', '--format', '--pretty', '--grep', '-S', '-G', '--since', '--until', '--date', '-n', '--max-count', '--depth', '--onto', '-e'];

const CONFIG_VALUED = ['-f', '--file', '--blob', '--type', '--default', '--comment', '--value', '--url'];
const CONFIG_WRITES = ['--add', '--replace-all', '--unset', '--unset-all', '--rename-section', '--remove-section', '--edit', '-e'];

/** `git config …` that writes a key outside the safe list, edits, or is only known at run time. */
function gitConfigWrite(args: string[], dyn: (k: number) => boolean): { command: string; reason: string } | undefined {
  const positional: string[] = [];
  let writes = false;
  for (let k = 0; k < args.length; k++) {
    if (dyn(k)) return { command: 'git config', reason: 'configuration known only at run time can run commands' };
    const a = args[k] as string;
    if (CONFIG_VALUED.includes(a)) {
      k += 1;
      continue;
    }
    if (CONFIG_WRITES.includes(a) || CONFIG_WRITES.some((w) => w.length > 2 && isLongOption(a, w))) writes = true;
    if (a === '--edit' || a === '-e' || isLongOption(a, '--rename-section')) return { command: `git config ${a}`, reason: 'edits configuration that can run commands' };
    if (!a.startsWith('-')) positional.push(a);
  }
  const verbs = ['get', 'list', 'set', 'unset', 'rename-section', 'remove-section', 'edit'];
  const verb = positional[0] && verbs.includes(positional[0]) ? positional.shift() : undefined;
  if (verb === 'edit' || verb === 'rename-section') return { command: `git config ${verb}`, reason: 'edits configuration that can run commands' };
  if (verb === 'get' || verb === 'list') return undefined;
  if (verb === 'set' || verb === 'unset' || writes || positional.length >= 2) {
    const key = positional[0];
    if (key === undefined || !gitSafeConfigKey(key)) return { command: `git config ${key ?? ''}`.trim(), reason: 'git configuration that can run commands' };
  }
  return undefined;
}

/** Filter options of `git filter-branch`: each value is shell code. */
const FILTER_BRANCH_OPTIONS = ['--env-filter', '--tree-filter', '--index-filter', '--parent-filter', '--msg-filter', '--commit-filter', '--tag-name-filter'];

/**
 * The shell code a git invocation runs through its exec features (`rebase -x`, `submodule
 * foreach`, `bisect run`, `difftool -x`, `filter-branch --*-filter`, `--upload-pack`, `ext::`),
 * so deny rules see inside it; undefined entries are only known at run time.
 */
export function gitPayloads(layer: SegmentWords): Array<string | undefined> {
  const view = gitView(layer);
  if (view.index < 0 || view.sub === undefined) return [];
  const sub = view.sub;
  const from = view.index + 1;
  const w = layer.words;
  const out: Array<string | undefined> = [];
  const value = (k: number, attached: string | undefined) => (attached !== undefined ? attached : layer.dynamic[k + 1] ? undefined : w[k + 1]);
  const rest = (k: number) => (layer.dynamic.slice(k).some(Boolean) ? undefined : w.slice(k).join(' '));
  for (let k = from; k < w.length; k++) {
    const a = w[k] as string;
    const attached = a.includes('=') ? a.slice(a.indexOf('=') + 1) : undefined;
    if (sub === 'submodule' && a === 'foreach') return [rest(k + 1)];
    if (sub === 'bisect' && a === 'run') return [rest(k + 1)];
    if (a.includes('ext::')) out.push(layer.dynamic[k] ? undefined : a.slice(a.indexOf('ext::') + 5).replace(/%(.)/g, '$1'));
    const execOptions = [...(GIT_EXEC_OPTIONS[sub]?.long ?? []), ...(GIT_EXEC_OPTIONS['*']?.long ?? []), ...(sub === 'filter-branch' ? FILTER_BRANCH_OPTIONS : [])];
    if (execOptions.some((o) => o !== '--template' && isLongOption(a, o))) out.push(value(k, attached));
    else if ((GIT_EXEC_OPTIONS[sub]?.short ?? []).some((s) => a === s)) out.push(value(k, undefined));
    else if ((GIT_EXEC_OPTIONS[sub]?.short ?? []).some((s) => a.startsWith(s) && a.length > 2)) out.push(a.slice(2));
  }
  return out;
}
