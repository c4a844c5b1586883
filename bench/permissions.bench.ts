import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { CORPUS, type CorpusCase } from '../packages/host/src/permissions/corpus.data';
import { evaluateCall } from '../packages/host/src/permissions/evaluate';
import { createGuard } from '../packages/host/src/permissions/guard';
import type { HookConfig } from '../packages/host/src/permissions/hook-config';
import { HookRunner } from '../packages/host/src/permissions/hooks';
import { parseRuleLines, type RuleLines } from '../packages/host/src/permissions/rules';
import { loadBashParser } from '../packages/host/src/permissions/shell-parser';
import { PluginHookTrustRepository } from '../packages/host/src/permissions/trust.repository';
import type { ToolCall } from '../packages/host/src/permissions/types';
import { migrate, openDatabase } from '../packages/host/src/storage/database';
import type { Tool } from '../packages/host/src/tools/tool';
import { fmt, median, p99 } from './stats';

/**
 * The guard's cost: (a) decisions per second over the permission corpus with 200 extra rules
 * loaded into every list mix (parse + segmentation + floor + decision), (b) the latency one
 * command hook (a process spawn through `sh -c`) adds to a call.
 */

/** 200 rules of every kind that match nothing in the corpus, spread over deny/ask/allow. */
function fillerRules(): RuleLines {
  const deny: string[] = [];
  const ask: string[] = [];
  const allow: string[] = [];
  for (let i = 0; i < 200; i++) {
    const line = [`Command(tool${i}:*)`, `Command(make${i} target)`, `Tool(plugin${i}_*)`, `Mcp(server${i}__*)`, `WebFetch(domain:site${i}.example)`, `Command(bin${i} *)`][i % 6] as string;
    (i % 5 === 0 ? deny : i % 5 === 1 ? ask : allow).push(line);
  }
  return { deny, ask, allow };
}

function withFiller(c: CorpusCase, filler: RuleLines): RuleLines {
  return { deny: [...(filler.deny ?? []), ...(c.rules.deny ?? [])], ask: [...(filler.ask ?? []), ...(c.rules.ask ?? [])], allow: [...(filler.allow ?? []), ...(c.rules.allow ?? [])] };
}

async function decisionsPerSecond(): Promise<string[]> {
  const parser = await loadBashParser();
  const filler = fillerRules();
  const cases = CORPUS.map((c) => ({
    lines: withFiller(c, filler),
    mode: c.mode,
    call: c.tool
      ? { name: c.tool.name, effect: c.tool.effect, source: c.tool.source, arguments: c.tool.arguments ?? {}, ...(c.tool.origin ? { origin: c.tool.origin } : {}) }
      : { name: 'execute_command', effect: 'command' as const, source: 'builtin', arguments: { command: c.command } },
  }));
  const rounds: number[] = [];
  const parsedRounds: number[] = [];
  const typicalRounds: number[] = [];
  const preParsed = cases.map((c) => parseRuleLines(c.lines).rules);
  const typical = cases.map((c, i) => ({ ...c, rules: preParsed[i] })).filter((c) => String(c.call.arguments.command ?? '').length < 1024);
  for (let warm = 0; warm < 3; warm++) for (const c of cases) evaluateCall(parser, { call: c.call, mode: c.mode, rules: parseRuleLines(c.lines).rules });
  for (let round = 0; round < 7; round++) {
    let t0 = performance.now();
    for (const c of cases) evaluateCall(parser, { call: c.call, mode: c.mode, rules: parseRuleLines(c.lines).rules });
    rounds.push((cases.length / (performance.now() - t0)) * 1000);
    t0 = performance.now();
    cases.forEach((c, i) => evaluateCall(parser, { call: c.call, mode: c.mode, rules: preParsed[i] as never }));
    parsedRounds.push((cases.length / (performance.now() - t0)) * 1000);
    t0 = performance.now();
    for (const c of typical) evaluateCall(parser, { call: c.call, mode: c.mode, rules: c.rules as never });
    typicalRounds.push((typical.length / (performance.now() - t0)) * 1000);
  }
  return [
    `corpus: ${cases.length} calls, ${200 + 2} rules each on average (200 filler + the case's own)`,
    `decisions/s incl. rule parsing   median ${fmt(median(rounds), 0)}  (7 rounds, min ${fmt(Math.min(...rounds), 0)})`,
    `decisions/s with parsed rules    median ${fmt(median(parsedRounds), 0)}  (7 rounds, min ${fmt(Math.min(...parsedRounds), 0)})`,
    `  without the ${cases.length - typical.length} resource-exhaustion lines (≥ 1 KiB): median ${fmt(median(typicalRounds), 0)} decisions/s`,
    '  (the guard parses a saved rule list once per settings revision, so calls see the "parsed rules" figure)',
  ];
}

function benchTool(): Tool {
  return { name: 'bench_tool', description: 'b', inputSchema: {}, effect: 'write', source: 'plugin', id: 'p:bench_tool', schemaRevision: '1', idempotent: false, available: true, invoke: async () => null };
}

async function hookLatency(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fengyu-bench-perm-'));
  const database = openDatabase(dir, 'memory');
  await migrate(database.db);
  const clock = { now: () => Date.now() };
  const logger = pino({ level: 'silent' });
  const doc: Record<string, unknown> = { permissions: fillerRules(), hooks: [] as HookConfig[] };
  const guard = createGuard({
    settings: { section: async <T,>(_o: string, name: string) => doc[name] as T },
    hooks: new HookRunner({ logger, clock, env: { PATH: process.env.PATH }, cwd: dir }),
    trust: new PluginHookTrustRepository(database.db, clock),
    logger,
    clock,
  });
  const call: ToolCall = { tool: benchTool(), arguments: { a: 1 }, owner: 'o', permissionMode: 'ask', caller: 'runner' };
  const sample = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await guard.check(call);
      times.push(performance.now() - t0);
    }
    return times;
  };
  await sample(20);
  const without = await sample(200);
  doc.hooks = [{ name: 'noop', event: 'pre_tool_use', matcher: '*', type: 'command', command: 'exit 0', timeoutSeconds: 10, enabled: true }];
  await sample(5);
  const withHook = await sample(60);
  await database.close();
  rmSync(dir, { recursive: true, force: true });
  return [
    `guard.check without hooks (200 rules)   median ${fmt(median(without))} ms  p99 ${fmt(p99(without))} ms`,
    `guard.check with one command hook       median ${fmt(median(withHook))} ms  p99 ${fmt(p99(withHook))} ms`,
    `added latency of one command hook       median ${fmt(median(withHook) - median(without))} ms (process spawn via sh -c)`,
  ];
}

export async function run(): Promise<string[]> {
  return [...(await decisionsPerSecond()), ...(await hookLatency())];
}
