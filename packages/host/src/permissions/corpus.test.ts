import { beforeAll, describe, expect, it } from 'vitest';
import { CORPUS, type CorpusCase } from './corpus.data';
import { evaluateCall } from './evaluate';
import { parseRuleLines } from './rules';
import { type BashParser, loadBashParser } from './shell-parser';

let parser: BashParser;
beforeAll(async () => {
  parser = await loadBashParser();
});

function run(c: CorpusCase) {
  const { rules, problems } = parseRuleLines(c.rules);
  expect(problems).toEqual([]);
  const call = c.tool
    ? { name: c.tool.name, effect: c.tool.effect, source: c.tool.source, arguments: c.tool.arguments ?? {}, ...(c.tool.origin ? { origin: c.tool.origin } : {}) }
    : { name: 'execute_command', effect: 'command' as const, source: 'builtin', arguments: { command: c.command } };
  return evaluateCall(parser, { call, mode: c.mode, rules });
}

function label(c: CorpusCase): string {
  const what = c.tool ? `${c.tool.name} ${JSON.stringify(c.tool.arguments ?? {})}` : JSON.stringify(c.command);
  return `${what} [${c.mode}] ${JSON.stringify(c.rules)} → ${c.expect}/${c.source}`;
}

describe('permission corpus', () => {
  it('is large and hostile enough', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    expect(CORPUS.filter((c) => c.hostile).length).toBeGreaterThanOrEqual(100);
  });

  it.each(CORPUS.map((c) => [label(c), c] as const))('%s', (_name, c) => {
    const d = run(c);
    expect({ decision: d.decision, source: d.source }, d.reason).toEqual({ decision: c.expect, source: c.source });
    expect(d.reason.length).toBeGreaterThan(0);
    if (d.source === 'deny' || d.source === 'ask' || d.source === 'allow') expect(d.rule).toBeTruthy();
  });
});
