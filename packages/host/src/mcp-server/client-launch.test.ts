import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findEntryScript, stdioLaunch } from './client-launch';

describe('the stdio launch a client copies', () => {
  it('finds the entry script above the sources and above the compiled host', () => {
    const root = '/opt/fengyu';
    const exists = (p: string) => p === join(root, 'bin/fengyu.mjs');
    expect(findEntryScript(join(root, 'packages/host/src/mcp-server'), exists)).toBe(join(root, 'bin/fengyu.mjs'));
    expect(findEntryScript(join(root, 'dist/host'), exists)).toBe(join(root, 'bin/fengyu.mjs'));
    expect(findEntryScript('/somewhere/else', exists)).toBeUndefined();
  });

  it('names the program and the script by absolute path, or an installed fengyu; never npx', () => {
    expect(stdioLaunch('/h', '/opt/fengyu/bin/fengyu.mjs', '/usr/bin/node')).toEqual({ command: '/usr/bin/node', args: ['/opt/fengyu/bin/fengyu.mjs', 'mcp'], env: { FENGYU_HOME: '/h' } });
    expect(stdioLaunch('/h', undefined, '/usr/bin/node')).toEqual({ command: 'fengyu', args: ['mcp'], env: { FENGYU_HOME: '/h' } });
  });
});
