import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, type OpenedDatabase, openDatabase } from '../storage/database';
import type { Tool } from '../tools/tool';
import { CORPUS, type CorpusCase } from './corpus.data';
import { createGuard, type Guard } from './guard';
import { HookRunner } from './hooks';
import { parseRuleLines, type RuleLines } from './rules';
import { PluginHookTrustRepository } from './trust.repository';

/**
 * The permission corpus through the real guard (`guard.check`: settings → hooks → rule parsing →
 * shell analysis → floor → decision), with a real SQLite trust table and hook runner. Each case's
 * rule lines are the owner's saved `permissions` section.
 */

let dir: string;
let database: OpenedDatabase;
let guard: Guard;
const sections = new Map<string, { permissions: RuleLines; hooks: [] }>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fengyu-corpus-'));
  database = openDatabase(dir, 'memory');
  await migrate(database.db);
  const clock = { now: () => Date.now() };
  const logger = pino({ level: 'silent' });
  guard = createGuard({
    settings: { section: async <T,>(owner: string, name: string) => (sections.get(owner) as Record<string, unknown> | undefined)?.[name] as T },
    hooks: new HookRunner({ logger, clock, env: { PATH: process.env.PATH }, cwd: dir }),
    trust: new PluginHookTrustRepository(database.db, clock),
    logger,
    clock,
  });
});
afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

function toolOf(c: CorpusCase): Tool {
  const t = c.tool ?? { name: 'execute_command', effect: 'command' as const, source: 'builtin' };
  return {
    name: t.name,
    description: t.name,
    inputSchema: {},
    effect: t.effect,
    source: t.source as Tool['source'],
    ...(t.origin ? { origin: t.origin } : {}),
    id: `${t.source}:${t.name}`,
    schemaRevision: '1',
    idempotent: false,
    available: true,
    invoke: async () => null,
  } as Tool;
}

let owners = 0;
async function run(c: CorpusCase) {
  expect(parseRuleLines(c.rules).problems).toEqual([]);
  const owner = `owner-${owners++}`;
  sections.set(owner, { permissions: c.rules, hooks: [] });
  const args = c.tool ? (c.tool.arguments ?? {}) : { command: c.command };
  return guard.check({ tool: toolOf(c), arguments: args, owner, permissionMode: c.mode, caller: 'runner' });
}

function label(c: CorpusCase): string {
  const what = c.tool ? `${c.tool.name} ${JSON.stringify(c.tool.arguments ?? {})}` : JSON.stringify(c.command);
  const text = `[${c.family}] ${what.length > 160 ? `${what.slice(0, 160)}…` : what}`;
  return `${text} [${c.mode}] ${JSON.stringify(c.rules).slice(0, 120)} → ${c.expect}/${c.source}`;
}

describe('permission corpus', () => {
  it('is large, hostile and benign enough', () => {
    const hostile = CORPUS.filter((c) => c.hostile);
    const benignAllowed = CORPUS.filter((c) => !c.hostile && c.expect === 'allow');
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    expect(hostile.length).toBeGreaterThanOrEqual(150);
    // a guard that refuses everything fails at least these
    expect(benignAllowed.length).toBeGreaterThanOrEqual(30);
    // every hostile case asserts "not allow"
    expect(hostile.filter((c) => c.expect === 'allow')).toEqual([]);
    for (const family of ['hidden code in expansions', 'git exec features', 'programs that run programs', 'rule semantics', 'web any-host deny']) {
      expect(hostile.filter((c) => c.family === family).length, family).toBeGreaterThanOrEqual(10);
    }
  });

  it.each(CORPUS.map((c) => [label(c), c] as const))('%s', async (_name, c) => {
    const d = await run(c);
    if (c.hostile) expect(d.decision, d.reason).not.toBe('allow');
    expect({ decision: d.decision, source: d.source }, d.reason).toEqual({ decision: c.expect, source: c.source });
    expect(d.reason.length).toBeGreaterThan(0);
    if (d.source === 'deny' || d.source === 'ask' || d.source === 'allow') expect(d.rule).toBeTruthy();
  });
});
