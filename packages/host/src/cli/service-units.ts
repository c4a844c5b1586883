import { join, win32 } from 'node:path';

/**
 * What `fengyu service` writes and runs, per platform, pure: a systemd user unit (Linux), a
 * launchd agent (macOS) or a Task Scheduler task defined by XML (Windows), each starting
 * `node <fengyu> serve --home <home>` at login and again after a crash. Nothing from the
 * environment goes into a file: the host reads its token from the home (never `FENGYU_TOKEN`),
 * so a service definition holds no secret. The commands are argument vectors, never shell text.
 */

export type ServicePlatform = 'linux' | 'darwin' | 'win32';

export interface ServiceSpec {
  platform: ServicePlatform;
  /** Absolute path of the node binary (the service manager's PATH is not the user's). */
  node: string;
  /** Absolute path of the `fengyu` entry (bin/fengyu.mjs). */
  entry: string;
  /** The data directory the service serves (`--home`). */
  home: string;
  /** The user's home folder (where systemd and launchd look for per-user definitions). */
  userHome: string;
  /** A fixed port, when the user asked for one. */
  port?: number;
  /** macOS: the user id (`gui/<uid>` domain). */
  uid?: number;
  /** Windows: the account the task runs as, at its logon. */
  user?: string;
}

export interface ServicePlan {
  /** The file written by install and removed by uninstall. */
  file: { path: string; content: string; encoding: 'utf8' | 'utf16le' };
  install: string[][];
  uninstall: string[][];
  status: string[][];
}

export const SERVICE_NAME = 'fengyu';
export const LAUNCHD_LABEL = 'dev.fengyu.host';
export const TASK_NAME = 'FengYu';

export function servicePlan(spec: ServiceSpec): ServicePlan {
  if (spec.platform === 'linux') return systemdPlan(spec);
  if (spec.platform === 'darwin') return launchdPlan(spec);
  return taskPlan(spec);
}

function serveArgs(spec: ServiceSpec): string[] {
  return [spec.entry, 'serve', '--home', spec.home, ...(spec.port !== undefined ? ['--port', String(spec.port)] : [])];
}

/** systemd's quoting: a double-quoted word, `\` and `"` escaped, `%` doubled (specifiers), `$` doubled (variables). */
export function systemdWord(s: string): string {
  if (/[\n\r\0]/.test(s)) throw new Error('a service path cannot hold a line break or NUL');
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

/** A path setting (WorkingDirectory=) takes the rest of the line unquoted; only specifiers are expanded there. */
export function systemdPath(s: string): string {
  if (/[\n\r\0]/.test(s)) throw new Error('a service path cannot hold a line break or NUL');
  return s.replace(/%/g, '%%');
}

function systemdPlan(spec: ServiceSpec): ServicePlan {
  const unit = `${SERVICE_NAME}.service`;
  const content = [
    '[Unit]',
    'Description=FengYu host (local AI agent and workflow host)',
    'After=network.target',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${[spec.node, ...serveArgs(spec)].map(systemdWord).join(' ')}`,
    `WorkingDirectory=${systemdPath(spec.home)}`,
    'Restart=on-failure',
    'RestartSec=5',
    // the host stops cleanly on SIGTERM (runs are interrupted and resumable)
    'KillSignal=SIGTERM',
    'TimeoutStopSec=30',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
  return {
    file: { path: join(spec.userHome, '.config/systemd/user', unit), content, encoding: 'utf8' },
    install: [
      ['systemctl', '--user', 'daemon-reload'],
      ['systemctl', '--user', 'enable', '--now', unit],
    ],
    uninstall: [
      ['systemctl', '--user', 'disable', '--now', unit],
      ['systemctl', '--user', 'daemon-reload'],
    ],
    status: [['systemctl', '--user', 'status', '--no-pager', unit]],
  };
}

/** XML text: the five predefined entities; control characters other than tab, LF and CR cannot be written. */
export function xmlText(s: string): string {
  if (/[\0-\x08\x0b\x0c\x0e-\x1f]/.test(s)) throw new Error('a service path cannot hold a control character');
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function launchdPlan(spec: ServiceSpec): ServicePlan {
  const args = [spec.node, ...serveArgs(spec)].map((a) => `    <string>${xmlText(a)}</string>`);
  const log = join(spec.home, 'logs', 'service.log');
  const content = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  <string>${LAUNCHD_LABEL}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...args,
    '  </array>',
    '  <key>WorkingDirectory</key>',
    `  <string>${xmlText(spec.home)}</string>`,
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key>',
    '    <false/>',
    '  </dict>',
    '  <key>StandardOutPath</key>',
    `  <string>${xmlText(log)}</string>`,
    '  <key>StandardErrorPath</key>',
    `  <string>${xmlText(log)}</string>`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
  const domain = `gui/${spec.uid ?? 501}`;
  const path = join(spec.userHome, 'Library/LaunchAgents', `${LAUNCHD_LABEL}.plist`);
  return {
    file: { path, content, encoding: 'utf8' },
    install: [['launchctl', 'bootstrap', domain, path]],
    uninstall: [['launchctl', 'bootout', `${domain}/${LAUNCHD_LABEL}`]],
    status: [['launchctl', 'print', `${domain}/${LAUNCHD_LABEL}`]],
  };
}

/** One Windows command-line argument (the CommandLineToArgvW rules): quoted, inner quotes and the backslashes before them escaped. */
export function windowsArg(s: string): string {
  if (s !== '' && !/[\s"]/.test(s)) return s;
  return `"${s.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`;
}

function taskPlan(spec: ServiceSpec): ServicePlan {
  const userId = spec.user ? [`      <UserId>${xmlText(spec.user)}</UserId>`] : [];
  const content = [
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
    '  <RegistrationInfo>',
    '    <Description>FengYu host (local AI agent and workflow host), started at logon</Description>',
    '    <URI>\\FengYu</URI>',
    '  </RegistrationInfo>',
    '  <Triggers>',
    '    <LogonTrigger>',
    '      <Enabled>true</Enabled>',
    ...userId,
    '    </LogonTrigger>',
    '  </Triggers>',
    '  <Principals>',
    '    <Principal id="Author">',
    ...userId,
    '      <LogonType>InteractiveToken</LogonType>',
    '      <RunLevel>LeastPrivilege</RunLevel>',
    '    </Principal>',
    '  </Principals>',
    '  <Settings>',
    '    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>',
    '    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>',
    '    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>',
    '    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>',
    '    <RestartOnFailure>',
    '      <Interval>PT1M</Interval>',
    '      <Count>3</Count>',
    '    </RestartOnFailure>',
    '    <Enabled>true</Enabled>',
    '  </Settings>',
    '  <Actions Context="Author">',
    '    <Exec>',
    `      <Command>${xmlText(spec.node)}</Command>`,
    `      <Arguments>${xmlText(serveArgs(spec).map(windowsArg).join(' '))}</Arguments>`,
    `      <WorkingDirectory>${xmlText(spec.home)}</WorkingDirectory>`,
    '    </Exec>',
    '  </Actions>',
    '</Task>',
    '',
  ].join('\r\n');
  const path = win32.join(spec.home, 'service', 'fengyu-task.xml');
  return {
    // schtasks reads the task XML as UTF-16 (with its byte order mark), as the declaration says
    file: { path, content, encoding: 'utf16le' },
    install: [
      ['schtasks', '/Create', '/TN', TASK_NAME, '/XML', path, '/F'],
      ['schtasks', '/Run', '/TN', TASK_NAME],
    ],
    uninstall: [
      ['schtasks', '/End', '/TN', TASK_NAME],
      ['schtasks', '/Delete', '/TN', TASK_NAME, '/F'],
    ],
    status: [['schtasks', '/Query', '/TN', TASK_NAME, '/V', '/FO', 'LIST']],
  };
}
