import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, type OpenedDatabase, openDatabase } from '../storage/database';
import type { Tool } from '../tools/tool';
import { createGuard, type Guard } from './guard';
import { HookRunner } from './hooks';
import { type BashParser, loadBashParser } from './shell-parser';
import { PluginHookTrustRepository } from './trust.repository';

/** The bash grammar is loaded for the first command call, never for other calls. */

let dir: string;
let database: OpenedDatabase;
let guard: Guard;
let loads = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fengyu-guard-parser-'));
  database = openDatabase(dir, 'memory');
  await migrate(database.db);
  const clock = { now: () => Date.now() };
  const logger = pino({ level: 'silent' });
  guard = createGuard({
    settings: { section: async <T,>(_owner: string, name: string) => (name === 'permissions' ? { deny: ['Command(rm *)'], ask: [], allow: [] } : []) as T },
    hooks: new HookRunner({ logger, clock, env: { PATH: process.env.PATH }, cwd: dir }),
    trust: new PluginHookTrustRepository(database.db, clock),
    logger,
    clock,
    parser: (): Promise<BashParser> => {
      loads++;
      return loadBashParser();
    },
  });
});
afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

const tool = (name: string, effect: Tool['effect']): Tool =>
  ({ name, description: name, inputSchema: {}, effect, source: 'builtin', id: `builtin:${name}`, schemaRevision: '1', idempotent: false, available: true, invoke: async () => null }) as Tool;

describe('the guard and the bash grammar', () => {
  it('decides other calls without loading it, even one whose arguments carry a command text', async () => {
    const d = await guard.check({ tool: tool('read_file', 'read'), arguments: { path: '/tmp/x', command: 'rm -rf /' }, owner: 'default', permissionMode: 'full-access', caller: 'runner' });
    expect(d.decision).toBe('allow');
    expect(loads).toBe(0);
  });

  it('loads it for a command call and still analyses every segment of the command line', async () => {
    const d = await guard.check({ tool: tool('execute_command', 'command'), arguments: { command: 'echo hi && rm -rf build' }, owner: 'default', permissionMode: 'full-access', caller: 'runner' });
    expect(d.decision).toBe('deny');
    expect(loads).toBe(1);
    const ok = await guard.check({ tool: tool('execute_command', 'command'), arguments: { command: 'echo hi' }, owner: 'default', permissionMode: 'full-access', caller: 'runner' });
    expect(ok.decision).toBe('allow');
  });
});
