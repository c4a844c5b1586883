import type { SegmentWords } from './rules';

/**
 * Programs with options that run a command (or name a program to run), as data. A program in
 * this table is on the dangerous-command floor when one of its exec options is present, or
 * when an argument is known only at run time (a variable may hold `--rsh=…` or `-oProxyCommand=…`,
 * and GNU tools accept options after operands) unless that argument is the value of an option
 * listed in `valued`, or follows `--`. Arguments appended at run time (`xargs tar`) count as
 * unknown arguments. Long options match their unambiguous abbreviations (`--to-com`).
 */
export interface ExecOptionSpec {
  /** Short options that run a command: alone, with an attached value, or inside a cluster. */
  short?: string[];
  /** Long options that run a command (`--name` or `--name=value`, abbreviations included). */
  long?: string[];
  /** Values that make an argument run code wherever they appear (`socat EXEC:`, `less +!cmd`). */
  values?: RegExp;
  /** Options whose value may be known only at run time without harm. */
  valued?: string[];
  /** Whether an argument known only at run time puts the program on the floor. */
  dynamic: boolean;
}

export const EXEC_OPTIONS: Readonly<Record<string, ExecOptionSpec>> = {
  find: {
    valued: [
      '-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-lname', '-ilname', '-type', '-xtype',
      '-newer', '-anewer', '-cnewer', '-user', '-group', '-perm', '-size', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin',
      '-maxdepth', '-mindepth', '-samefile', '-links', '-inum', '-uid', '-gid', '-used', '-fstype', '-printf', '-fprint', '-fprintf', '-fls',
    ],
    dynamic: true,
  },
  tar: { valued: ['-f', '--file', '-C', '--directory', '--exclude', '-T', '--files-from', '-X', '--exclude-from', '--transform', '--strip-components', '-N', '--newer', '--owner', '--group', '--mode', '--mtime'], dynamic: true },
  rsync: {
    valued: ['--exclude', '--include', '--filter', '--files-from', '--exclude-from', '--include-from', '--log-file', '--backup-dir', '--suffix', '--compare-dest', '--copy-dest', '--link-dest', '--port', '--chmod', '--chown', '--timeout', '--bwlimit', '--max-size', '--min-size', '--partial-dir', '--temp-dir'],
    dynamic: true,
  },
  ssh: { short: ['-F'], valued: ['-p', '-l', '-i', '-L', '-R', '-D', '-W', '-b', '-c', '-m', '-E'], dynamic: true },
  scp: { short: ['-S', '-F'], valued: ['-P', '-l', '-i', '-c'], dynamic: true },
  sftp: { short: ['-S', '-D', '-F'], valued: ['-P', '-l', '-i', '-c', '-b'], dynamic: true },
  sed: { valued: ['-l', '--line-length'], dynamic: true },
  gsed: { valued: ['-l', '--line-length'], dynamic: true },
  zip: { short: ['-TT'], long: ['--unzip-command'], valued: ['-x', '-i', '-b', '-n', '-P'], dynamic: true },
  man: { short: ['-P', '-H'], long: ['--pager', '--html'], valued: ['-L', '-M', '-S', '-s', '--sections', '-m'], dynamic: true },
  wget: { long: ['--use-askpass', '--execute'], short: ['-e'], dynamic: false },
  sort: { long: ['--compress-program'], dynamic: false },
  split: { long: ['--filter'], dynamic: false },
  socat: { values: /^(exec|system)[:,]|[!,](exec|system):/i, dynamic: true },
  nc: { short: ['-e', '-c'], long: ['--exec', '--sh-exec', '--lua-exec'], dynamic: false },
  ncat: { short: ['-e', '-c'], long: ['--exec', '--sh-exec', '--lua-exec'], dynamic: false },
  netcat: { short: ['-e', '-c'], long: ['--exec', '--sh-exec'], dynamic: false },
  gcc: { short: ['-B'], values: /^-(wrapper|fplugin|specs=|iplugindir)/, dynamic: false },
  cc: { short: ['-B'], values: /^-(wrapper|fplugin|specs=|iplugindir)/, dynamic: false },
  'g++': { short: ['-B'], values: /^-(wrapper|fplugin|specs=|iplugindir)/, dynamic: false },
  clang: { short: ['-B'], values: /^-(fplugin|Xclang)/, dynamic: false },
  'ssh-keygen': { short: ['-D'], dynamic: false },
  'ssh-add': { short: ['-s', '-S'], dynamic: false },
  openssl: { values: /^(engine|-engine)$|SO_PATH|dynamic_path/i, dynamic: false },
  less: { values: /^\+.*[!|]/, dynamic: false },
  more: { values: /^\+.*[!|]/, dynamic: false },
};

function isLong(word: string, name: string): boolean {
  if (!word.startsWith('--')) return false;
  const key = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
  return key.length >= 5 && name.startsWith(key);
}

function isShort(word: string, name: string): boolean {
  if (!/^-[A-Za-z]/.test(word) || word.startsWith('--')) return false;
  if (name.length > 2) return word === name || word.startsWith(name);
  return word.startsWith(name) || /^-[A-Za-z]+$/.test(word) && word.slice(1).includes(name.slice(1));
}

/** Why a program from the table is on the floor for this invocation, if it is. */
export function execOptionReason(name: string, layer: SegmentWords): string | undefined {
  const spec = EXEC_OPTIONS[name];
  if (!spec) return undefined;
  const words = layer.words;
  let afterDashes = false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (layer.dynamic[i]) {
      if (!spec.dynamic || afterDashes) continue;
      const previous = words[i - 1] ?? '';
      const staticKey = /^--?[A-Za-z][\w-]*=/.exec(w)?.[0].slice(0, -1);
      if (!layer.dynamic[i - 1] && spec.valued?.includes(previous)) continue;
      if (staticKey && !spec.long?.some((l) => isLong(staticKey, l)) && !spec.short?.includes(staticKey)) continue;
      return `an argument known only at run time ("${clip(w)}") can be an option that runs a command`;
    }
    if (w === '--' && name !== 'find') {
      afterDashes = true;
      continue;
    }
    if (afterDashes) continue;
    if (spec.short?.some((s) => isShort(w, s)) || spec.long?.some((l) => isLong(w, l))) return `option "${clip(w)}" runs a command`;
    if (spec.values?.test(w)) return `argument "${clip(w)}" runs a command`;
  }
  if (spec.dynamic && layer.trailingDynamic) return 'arguments appended at run time can be options that run a command';
  return undefined;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
