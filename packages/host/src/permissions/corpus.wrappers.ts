import type { Row } from './corpus.sets';

/**
 * Every wrapper that execs its arguments, surveyed: each prefix below runs the command after it.
 * For each, `rm -rf /` behind it stays on the floor in full-access under a blanket allow, a deny
 * rule for `rm` still denies it, and `git status` behind it is covered by `Command(git:*)` (the
 * wrapper is transparent for allow rules). Wrappers whose command is shell source (`su -c`,
 * `script -c`, `flock -c`, `watch`, `sh -c`) are in the other families.
 */
export const EXEC_PREFIXES: string[] = [
  'prlimit --nofile=64',
  'prlimit -n64 --cpu=10',
  'prlimit -n',
  'bwrap --bind / /',
  'bwrap --ro-bind /usr /usr --dev /dev --proc /proc --unshare-all --die-with-parent --',
  'bwrap --setenv A b --overlay a b c --chmod 0755 /x',
  'unshare -r',
  'unshare --mount --pid --fork',
  'nsenter -t 1 -m -u',
  'chroot /',
  'setpriv --reuid=1000 --regid=1000 --clear-groups --no-new-privs',
  'firejail --noprofile --net=none',
  'systemd-run --user --wait --pipe',
  'taskset -c 0',
  'taskset 0x1',
  'ionice -c3',
  'chrt -f 1',
  'stdbuf -oL',
  'timeout -s KILL 5s',
  'timeout 5',
  'nice -n 5',
  'nice -5',
  'env -i A=1',
  'flock /tmp/l',
  'flock -w 5 /tmp/l',
  'sudo -u root',
  'doas -u root',
  'runuser -u root --',
  'setsid -f',
  'nohup',
  'time -p',
  'command',
  'exec',
  'cpulimit -l 50 --',
  'numactl --interleave=all',
  'setarch x86_64 -R',
  'linux64',
  'cgexec -g cpu:grp',
  'gosu root',
  'su-exec root',
  'setuidgid root',
  'chpst -u root',
  'tini --',
  'dumb-init --single-child',
  'sshpass -p pw',
  'dbus-launch --exit-with-session',
  'systemd-inhibit --what=idle',
  'chronic -e',
  'ifne',
  'rlwrap --always-readline',
  'faketime -f +1d',
  'strace -f',
  'xvfb-run -a',
  'eatmydata',
];

/** Wrappers that are on the floor themselves (another user, replacing the shell). */
const ON_FLOOR = new Set(['sudo', 'doas', 'runuser', 'exec']);

export const EXEC_WRAPPERS: Row[] = EXEC_PREFIXES.flatMap((prefix): Row[] => [
  [`${prefix} rm -rf /`, 'blanket', 'ask', 'floor', 'F'],
  [`${prefix} rm -rf /`, 'denyRm', 'deny', 'deny'],
  ON_FLOOR.has(prefix.split(' ')[0] as string) ? [`${prefix} git status`, 'gitAll', 'ask', 'floor'] : [`${prefix} git status`, 'gitAll', 'allow', 'allow'],
]);

/** Wrappers whose command cannot be read from the words, or that start a shell without one. */
export const EXEC_OPAQUE: Row[] = [
  ['bwrap --args 3 git status', 'gitAll', 'ask', 'floor', 'F'],
  ['bwrap --bind "$SRC" / git status', 'gitAll', 'ask', 'floor', 'F'],
  ['bwrap --bind "$SRC" / rm -rf /', 'denyRm', 'deny', 'deny', 'F'],
  ['firejail', 'blanket', 'ask', 'floor', 'F'],
  ['setarch x86_64', 'blanket', 'ask', 'floor', 'F'],
  ['prlimit --bogus rm -rf /', 'blanket', 'ask', 'floor', 'F'],
  // no command: the wrapper only changes another process
  ['prlimit --pid 1 --nofile=64', 'blanket', 'allow', 'allow', 'F'],
  ['setpriv --dump', 'blanket', 'allow', 'allow', 'F'],
];
