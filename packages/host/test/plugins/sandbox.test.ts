import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isFengYuError } from '@fengyu/protocol';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractPackage } from '../../src/plugins/package-reader';
import { bwrapArgs, commandBwrapArgs, detectSandbox, grantKey } from '../../src/plugins/sandbox';
import { WorkerManager, type WorkerTarget } from '../../src/plugins/worker-manager';
import type { FileGrant } from '../../src/tools/tool';
import { packProbe, tempDir } from './helpers';

const backend = detectSandbox('auto', process.env);

describe('sandbox arguments (pure)', () => {
  it('binds root read-only, data read-write, grants per access, parents first, no network', () => {
    const grants: FileGrant[] = [
      { name: 'inner', path: '/tmp/g/a/b', kind: 'directory', access: 'read' },
      { name: 'outer', path: '/tmp/g', kind: 'directory', access: 'read-write' },
    ];
    const args = bwrapArgs({ nodePath: '/usr/bin/node', worker: 'w.mjs', root: '/h/plugins/p/1', dataDir: '/h/plugin-data/p', grants });
    const joined = args.join(' ');
    expect(args.slice(0, 2)).toEqual(['--unshare-all', '--die-with-parent']);
    expect(joined).toContain('--ro-bind /h/plugins/p/1 /h/plugins/p/1');
    expect(joined).toContain('--bind /h/plugin-data/p /h/plugin-data/p');
    expect(joined.indexOf('--bind /tmp/g /tmp/g')).toBeLessThan(joined.indexOf('--ro-bind /tmp/g/a/b /tmp/g/a/b'));
    expect(joined.indexOf('--tmpfs /tmp')).toBeLessThan(joined.indexOf('/tmp/g /tmp/g'));
    expect(joined).toContain('--setenv FENGYU_PLUGIN_ROOT /h/plugins/p/1');
    expect(joined).not.toContain('--share-net');
    expect(joined).not.toMatch(/--ro-bind \/ \//);
    expect(joined).toContain('--cap-drop ALL');
  });

  it('always drops capabilities, and uses the hardening the probe found', () => {
    const launch = { nodePath: '/usr/bin/node', worker: 'w.mjs', root: '/r', dataDir: '/d', grants: [] };
    expect(bwrapArgs(launch, ['--unshare-user']).join(' ')).toContain('--unshare-user --cap-drop ALL');
    expect(bwrapArgs(launch, ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL']).join(' ')).toContain('--unshare-user --disable-userns --cap-drop ALL');
  });

  it('hides FENGYU_HOME and the user home from other owners\' commands, without letting a grant uncover them', () => {
    const args = commandBwrapArgs({
      home: '/home/u/.fengyu',
      userHome: '/home/u',
      scratch: '/home/u/.fengyu/runs/r1/work',
      cwd: '/home/u/.fengyu/runs/r1/work',
      grants: [
        { name: 'up', path: '/home/u/.fengyu/files/f1/a.txt', kind: 'file', access: 'read' },
        { name: 'sneaky', path: '/home/u/.fengyu/token', kind: 'file', access: 'read' },
        { name: 'wide', path: '/home/u', kind: 'directory', access: 'read' },
      ],
    });
    const j = args.join(' ');
    expect(j).toContain('--cap-drop ALL');
    expect(j).toContain('--die-with-parent');
    expect(j.indexOf('--ro-bind /home/u /home/u')).toBeLessThan(j.indexOf('--tmpfs /home/u '));
    expect(j.indexOf('--tmpfs /home/u ')).toBeLessThan(j.indexOf('--tmpfs /home/u/.fengyu'));
    expect(j.indexOf('--tmpfs /home/u/.fengyu')).toBeLessThan(j.indexOf('--bind /home/u/.fengyu/runs/r1/work'));
    expect(j).toContain('--ro-bind /home/u/.fengyu/files/f1/a.txt /home/u/.fengyu/files/f1/a.txt');
    expect(j).not.toContain('/home/u/.fengyu/token');
    expect(j).toMatch(/--chdir \/home\/u\/\.fengyu\/runs\/r1\/work$/);
  });

  it('keys sandboxed workers by grant set, unsandboxed ones not at all', () => {
    const g: FileGrant[] = [{ name: 'a', path: '/x', kind: 'file', access: 'read' }];
    expect(grantKey({ posture: { mode: 'unsandboxed', backend: 'none' } }, g)).toBe('');
    expect(grantKey({ posture: { mode: 'sandboxed', backend: 'bwrap' }, bwrapPath: '/usr/bin/bwrap' }, g)).toBe('read:/x');
  });

  it('refuses plugin calls when bwrap is demanded but unavailable (never silently weaker)', async () => {
    const missing = detectSandbox('bwrap', { PATH: '/nonexistent' });
    const m = new WorkerManager({ backend: missing, logger: pino({ level: 'silent' }) });
    const target = { pluginId: 'x.y', version: '1.0.0', root: '/nonexistent', dataDir: '/nonexistent', worker: 'w.mjs' };
    await expect(m.invoke({ target, method: 'noop', params: {}, toolName: 'x', timeoutSeconds: 1, grants: [] })).rejects.toMatchObject({ code: 'sandbox_unavailable' });
    expect(m.size).toBe(0);
    await m.close();
  });

  it('reports bwrap demanded but missing as unavailable', () => {
    expect(detectSandbox('bwrap', { PATH: '/nonexistent' })).toMatchObject({ posture: { mode: 'unsandboxed' }, unavailable: expect.any(String) });
    expect(detectSandbox('off', process.env).posture).toEqual({ mode: 'unsandboxed', backend: 'none' });
  });
});

describe.skipIf(!backend.bwrapPath)('bubblewrap confinement (real workers)', () => {
  let target: WorkerTarget;
  let outside: string;
  let grantDir: string;
  let manager: WorkerManager;
  beforeAll(async () => {
    const home = tempDir();
    target = { pluginId: 'test.fengyu.probe', version: '1.0.0', root: join(home, 'plugins/p/1.0.0'), dataDir: join(home, 'plugin-data/p'), worker: 'worker.mjs' };
    await extractPackage(await packProbe(), target.root);
    mkdirSync(target.dataDir, { recursive: true });
    outside = join(home, 'secret.txt');
    writeFileSync(outside, 'top secret');
    grantDir = join(home, 'granted');
    mkdirSync(grantDir);
    writeFileSync(join(grantDir, 'in.txt'), 'granted text');
    manager = new WorkerManager({ backend, logger: pino({ level: 'silent' }), killGraceMs: 300 });
  });
  afterAll(() => manager.close());

  const call = (method: string, params: unknown, grants: FileGrant[] = []) =>
    manager.invoke({ target, method, params, toolName: method, timeoutSeconds: 10, grants });
  const reason = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      return isFengYuError(e) ? String(e.params.reason) : String(e);
    }
    return 'succeeded';
  };

  it('hides everything that is not granted, even when the host check is bypassed', async () => {
    expect(await reason(call('read_file', { path: outside }))).toContain('ENOENT');
    expect(await reason(call('read_file', { path: '/root/.bashrc' }))).toMatch(/ENOENT|EACCES/);
    expect(await call('read_file', { path: join(grantDir, 'in.txt') }, [{ name: 'g', path: grantDir, kind: 'directory', access: 'read' }])).toEqual({ text: 'granted text' });
  });

  it('has no network unless the manifest asks for it (sandbox.network)', async () => {
    const server = createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await call('connect', { port })).toMatchObject({ connected: false });
      const withNet = await manager.invoke({ target: { ...target, network: true }, method: 'connect', params: { port }, toolName: 'connect', timeoutSeconds: 10, grants: [] });
      expect(withNet).toEqual({ connected: true });
    } finally {
      server.close();
    }
  });

  it('keeps a read-only grant read-only from inside: no capabilities, no remount, no new namespaces', async () => {
    const file = join(grantDir, 'in.txt');
    const ro: FileGrant[] = [{ name: 'g', path: grantDir, kind: 'directory', access: 'read' }];
    const script = [
      'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status',
      `mount -o remount,bind,rw ${grantDir} 2>&1 || echo remount-refused`,
      `mount -o remount,rw ${grantDir} 2>&1 || echo remount2-refused`,
      `mount -t tmpfs none ${grantDir} 2>&1 || echo mount-refused`,
      `unshare -Urm sh -c "mount -o remount,bind,rw ${grantDir} && echo pwned > ${file}" 2>&1 || echo unshare-refused`,
      `echo pwned > ${file} 2>&1 || echo write-refused`,
      `rm -f ${file} 2>&1 || echo rm-refused`,
      `mv ${file} ${grantDir}/moved.txt 2>&1 || echo mv-refused`,
      `chmod 777 ${file} 2>&1 || echo chmod-refused`,
    ].join('; ');
    const r = (await call('shell', { script }, ro)) as { stdout: string; stderr: string };
    expect(r.stdout).toMatch(/CapEff:\s+0+\n/);
    expect(r.stdout).toMatch(/CapBnd:\s+0+\n/);
    for (const refused of ['remount-refused', 'remount2-refused', 'mount-refused', 'unshare-refused', 'write-refused', 'rm-refused', 'mv-refused', 'chmod-refused']) expect(r.stdout).toContain(refused);
    expect(readFileSync(file, 'utf8')).toBe('granted text');
  });

  it('enforces read-only grants and the read-only install dir; the data dir is writable', async () => {
    const ro: FileGrant[] = [{ name: 'g', path: grantDir, kind: 'directory', access: 'read' }];
    expect(await reason(call('write_file', { directory: grantDir, name: 'x.txt', text: 'no' }, ro))).toContain('EROFS');
    expect(await reason(call('write_file', { directory: target.root, name: 'x.txt', text: 'no' }))).toContain('EROFS');
    await call('write_file', { directory: target.dataDir, name: 'state.txt', text: 'yes' });
    expect(readFileSync(join(target.dataDir, 'state.txt'), 'utf8')).toBe('yes');
    const rw: FileGrant[] = [{ name: 'g', path: grantDir, kind: 'directory', access: 'read-write' }];
    await call('write_file', { directory: grantDir, name: 'ok.txt', text: 'written' }, rw);
    expect(readFileSync(join(grantDir, 'ok.txt'), 'utf8')).toBe('written');
  });
});
