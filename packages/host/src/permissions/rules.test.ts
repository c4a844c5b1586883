import { describe, expect, it } from 'vitest';
import { parseRule, parseRuleLines } from './rules';

describe('rule lines', () => {
  it.each([
    // a rule without `:*` is a word-boundary prefix too (it used to match the exact words only)
    ['Command(git status)', { kind: 'command', match: { type: 'prefix', words: ['git', 'status'] } }],
    ['Command(git:*)', { kind: 'command', match: { type: 'prefix', words: ['git'] } }],
    ['Bash(npm run:*)', { kind: 'command', match: { type: 'prefix', words: ['npm', 'run'] } }],
    ['Command', { kind: 'command', match: { type: 'all' } }],
    ['Bash', { kind: 'command', match: { type: 'all' } }],
    ['Command(*)', { kind: 'command', match: { type: 'all' } }],
    ['Tool(excel_*)', { kind: 'tool', glob: 'excel_*' }],
    ['Effect(read)', { kind: 'effect', effect: 'read' }],
    ['Mcp(github__*)', { kind: 'mcp', glob: 'github__*' }],
    ['mcp__github', { kind: 'mcp', glob: 'github__*' }],
    ['mcp__my_server__tool', { kind: 'mcp', glob: 'my_server__tool' }],
    ['WebFetch(domain:Example.COM)', { kind: 'webfetch', domain: 'example.com' }],
    ['WebFetch', { kind: 'webfetch' }],
    ['  Tool(x)  ', { kind: 'tool', glob: 'x' }],
  ])('parses %s', (line, expected) => {
    expect(parseRule(line)).toMatchObject(expected);
  });

  it.each([
    ['Shell(ls)', /unknown rule kind "Shell"/],
    ['command(ls)', /unknown rule kind/],
    ['Command(git status', /missing closing parenthesis/],
    ['Tool()', /empty pattern/],
    ['Command(  )', /empty pattern/],
    ['Tool', /needs a pattern/],
    ['Effect(delete)', /unknown effect/],
    ['WebFetch(example.com)', /domain:<host>/],
    ['WebFetch(domain:)', /empty pattern|domain:<host>/],
    ['', /empty rule/],
    ['Tool(a)\nTool(b)', /single line/],
  ])('rejects %j', (line, reason) => {
    const r = parseRule(line);
    expect('error' in r && r.error).toMatch(reason);
  });

  it('reports every malformed line with its list and 1-based line number', () => {
    const { rules, problems } = parseRuleLines({ allow: ['Tool(a)', 'Tool(', 'Effect(read)'], deny: ['Nope(x)'] });
    expect(rules.allow).toHaveLength(2);
    expect(problems).toEqual([
      { list: 'deny', line: 1, text: 'Nope(x)', reason: expect.stringContaining('unknown rule kind') },
      { list: 'allow', line: 2, text: 'Tool(', reason: 'missing closing parenthesis ")"' },
    ]);
  });
});
