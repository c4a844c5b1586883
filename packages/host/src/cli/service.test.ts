import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServiceDeps, serviceCommand } from './service-command';
import { servicePlan, systemdWord, windowsArg, xmlText } from './service-units';

/** The service definitions per platform and the CLI's dry run; nothing is ever installed here. */

const tmp = mkdtempSync(join(tmpdir(), 'fengyu-service-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const odd = join(tmp, 'my data & "100%" $HOME <x>');

function recorder(platform: NodeJS.Platform, installed = false) {
  const out: string[] = [];
  const calls: string[] = [];
  const deps: ServiceDeps = {
    platform,
    node: platform === 'win32' ? 'C:\\Program Files\\nodejs\\node.exe' : '/usr/local/bin/node',
    entry: platform === 'win32' ? 'C:\\Users\\Ann Lee\\fengyu\\bin\\fengyu.mjs' : '/opt/fengyu/bin/fengyu.mjs',
    userHome: platform === 'win32' ? 'C:\\Users\\Ann Lee' : '/home/ann',
    uid: 501,
    user: 'Ann Lee',
    out: (t) => out.push(t),
    exec: async (argv, env) => {
      calls.push(`exec ${argv.join(' ')}`);
      expect(Object.keys(env).filter((k) => k.startsWith('FENGYU_'))).toEqual([]);
      return 0;
    },
    writeFile: (path, _c, enc) => void calls.push(`write ${path} ${enc}`),
    removeFile: (path) => void calls.push(`remove ${path}`),
    exists: () => installed,
  };
  return { deps, out, calls, text: () => out.join('') };
}

describe('service definitions', () => {
  it('Linux: a systemd user unit that starts `node fengyu serve --home` at login and after a crash, every word quoted', async () => {
    const p = servicePlan({ platform: 'linux', node: '/usr/bin/node', entry: '/opt/fengyu/bin/fengyu.mjs', home: odd, userHome: '/home/ann', port: 7900 });
    expect(p.file.path).toBe('/home/ann/.config/systemd/user/fengyu.service');
    const lines = p.file.content.split('\n');
    expect(lines).toContain(`ExecStart="/usr/bin/node" "/opt/fengyu/bin/fengyu.mjs" "serve" "--home" ${systemdWord(odd)} "--port" "7900"`);
    // systemd specifiers and variables stay literal: % doubled, $ doubled, quotes escaped
    expect(systemdWord(odd)).toBe(`"${tmp}/my data & \\"100%%\\" $$HOME <x>"`);
    expect(lines).toEqual(expect.arrayContaining(['[Service]', 'Restart=on-failure', '[Install]', 'WantedBy=default.target']));
    expect(p.install).toEqual([['systemctl', '--user', 'daemon-reload'], ['systemctl', '--user', 'enable', '--now', 'fengyu.service']]);
    expect(p.uninstall[0]).toEqual(['systemctl', '--user', 'disable', '--now', 'fengyu.service']);
    expect(() => systemdWord('a\nExecStartPre=/bin/evil')).toThrow();
  });

  it.runIf(existsSync('/usr/bin/systemd-analyze'))('Linux: systemd itself accepts the unit for an awkward home (systemd-analyze verify)', () => {
    mkdirSync(odd, { recursive: true });
    const p = servicePlan({ platform: 'linux', node: process.execPath, entry: '/opt/fengyu/bin/fengyu.mjs', home: odd, userHome: tmp });
    const unit = join(tmp, 'fengyu.service');
    writeFileSync(unit, p.file.content);
    const r = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('macOS: a launchd agent with the arguments as separate XML-escaped strings, run at load, kept alive after a crash', async () => {
    const p = servicePlan({ platform: 'darwin', node: '/usr/local/bin/node', entry: '/opt/fengyu/bin/fengyu.mjs', home: odd, userHome: '/Users/ann', uid: 502 });
    expect(p.file.path).toBe('/Users/ann/Library/LaunchAgents/dev.fengyu.host.plist');
    const c = p.file.content;
    expect(c).toContain(['<array>', '    <string>/usr/local/bin/node</string>', '    <string>/opt/fengyu/bin/fengyu.mjs</string>', '    <string>serve</string>', '    <string>--home</string>', `    <string>${xmlText(odd)}</string>`, '  </array>'].join('\n'));
    expect(xmlText(odd)).toBe(`${tmp}/my data &amp; &quot;100%&quot; $HOME &lt;x&gt;`);
    expect(c).toMatch(/<key>RunAtLoad<\/key>\s*<true\/>/);
    expect(c).toMatch(/<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>/);
    expect(c).not.toContain('--port');
    expect(p.install).toEqual([['launchctl', 'bootstrap', 'gui/502', p.file.path]]);
    expect(p.status).toEqual([['launchctl', 'print', 'gui/502/dev.fengyu.host']]);
  });

  it('Windows: a Task Scheduler XML (UTF-16, CRLF) with a logon trigger for the user and Windows-quoted arguments', async () => {
    const home = 'C:\\Users\\Ann Lee\\.fengyu';
    const p = servicePlan({ platform: 'win32', node: 'C:\\Program Files\\nodejs\\node.exe', entry: 'C:\\Users\\Ann Lee\\fengyu\\bin\\fengyu.mjs', home, userHome: 'C:\\Users\\Ann Lee', user: 'Ann & Lee' });
    expect(p.file).toMatchObject({ path: 'C:\\Users\\Ann Lee\\.fengyu\\service\\fengyu-task.xml', encoding: 'utf16le' });
    const c = p.file.content;
    expect(c.startsWith('<?xml version="1.0" encoding="UTF-16"?>\r\n')).toBe(true);
    expect(c.split('\r\n').every((l) => !l.includes('\n'))).toBe(true);
    expect(c).toContain('<LogonTrigger>\r\n      <Enabled>true</Enabled>\r\n      <UserId>Ann &amp; Lee</UserId>');
    expect(c).toContain('<Command>C:\\Program Files\\nodejs\\node.exe</Command>');
    expect(c).toContain('<Arguments>&quot;C:\\Users\\Ann Lee\\fengyu\\bin\\fengyu.mjs&quot; serve --home &quot;C:\\Users\\Ann Lee\\.fengyu&quot;</Arguments>');
    expect(c).toContain('<ExecutionTimeLimit>PT0S</ExecutionTimeLimit>');
    expect(p.install).toEqual([['schtasks', '/Create', '/TN', 'FengYu', '/XML', p.file.path, '/F'], ['schtasks', '/Run', '/TN', 'FengYu']]);
    // CommandLineToArgvW: quotes escaped, backslashes doubled only before a quote or the closing quote
    expect([windowsArg('plain'), windowsArg('a b\\'), windowsArg('say "hi"'), windowsArg('C:\\x\\'), windowsArg('')]).toEqual(['plain', '"a b\\\\"', '"say \\"hi\\""', 'C:\\x\\', '""']);
  });
});

describe('fengyu service (the CLI)', () => {
  it('--dry-run prints the file and the commands for each platform and action, touching nothing', async () => {
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      for (const action of ['install', 'uninstall', 'status'] as const) {
        const r = recorder(platform);
        expect(await serviceCommand(action, { home: odd, dryRun: true }, r.deps), `${platform} ${action}`).toBe(0);
        expect(r.calls, `${platform} ${action}`).toEqual([]);
        expect(r.text()).toContain(`# fengyu service ${action} --dry-run: nothing is written or run`);
      }
    }
    const linux = recorder('linux');
    await serviceCommand('install', { home: odd, dryRun: true, port: 7900 }, linux.deps);
    expect(linux.text()).toContain('# would write /home/ann/.config/systemd/user/fengyu.service:\n[Unit]');
    expect(linux.text()).toContain('"--port" "7900"');
    expect(linux.text()).toContain('\nsystemctl --user daemon-reload\nsystemctl --user enable --now fengyu.service\n');
    const win = recorder('win32');
    await serviceCommand('install', { home: odd, dryRun: true }, win.deps);
    expect(win.text()).toMatch(/\nschtasks \/Create \/TN FengYu \/XML '.*\\service\\fengyu-task\.xml' \/F\nschtasks \/Run \/TN FengYu\n/);
    expect(win.text()).toContain('(UTF-16 with a byte order mark)');
  });

  it('never writes the token, the secrets key or the database URL of the environment into the service', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { FENGYU_TOKEN: 'tok-should-not-leak', FENGYU_SECRETS_KEY: 'key-should-not-leak', FENGYU_DATABASE_URL: 'postgres://u:pw-should-not-leak@db/x' });
    try {
      for (const platform of ['linux', 'darwin', 'win32'] as const) {
        const dry = recorder(platform);
        await serviceCommand('install', { home: odd, dryRun: true }, dry.deps);
        expect(dry.text()).not.toMatch(/should-not-leak|FENGYU_TOKEN|FENGYU_SECRETS_KEY/);
        const real = recorder(platform);
        const written: string[] = [];
        real.deps.writeFile = (_p, content) => void written.push(content);
        expect(await serviceCommand('install', { home: odd }, real.deps)).toBe(0);
        expect(written.join('')).not.toContain('should-not-leak');
        expect(real.text()).toContain('FENGYU_TOKEN, FENGYU_SECRETS_KEY, FENGYU_DATABASE_URL are set here but not carried into the service');
      }
    } finally {
      for (const k of ['FENGYU_TOKEN', 'FENGYU_SECRETS_KEY', 'FENGYU_DATABASE_URL']) if (saved[k] === undefined) delete process.env[k];
    }
  });

  it('install writes then enables; uninstall stops, then removes; status of a missing service says so', async () => {
    const r = recorder('linux');
    expect(await serviceCommand('install', { home: odd }, r.deps)).toBe(0);
    expect(r.calls).toEqual(['write /home/ann/.config/systemd/user/fengyu.service utf8', 'exec systemctl --user daemon-reload', 'exec systemctl --user enable --now fengyu.service']);
    const gone = recorder('linux', true);
    expect(await serviceCommand('uninstall', { home: odd }, gone.deps)).toBe(0);
    expect(gone.calls).toEqual(['exec systemctl --user disable --now fengyu.service', 'exec systemctl --user daemon-reload', 'remove /home/ann/.config/systemd/user/fengyu.service']);
    const none = recorder('darwin', false);
    expect(await serviceCommand('status', { home: odd }, none.deps)).toBe(3);
    expect(none.text()).toContain('not installed');
    expect(none.calls).toEqual([]);
  });

  it('refuses an unknown platform and a bad port before doing anything', async () => {
    const bsd = recorder('freebsd');
    expect(await serviceCommand('install', { home: odd }, bsd.deps)).toBe(2);
    expect(bsd.calls).toEqual([]);
    const port = recorder('linux');
    expect(await serviceCommand('install', { home: odd, port: 70000 }, port.deps)).toBe(2);
    expect(port.calls).toEqual([]);
  });
});
