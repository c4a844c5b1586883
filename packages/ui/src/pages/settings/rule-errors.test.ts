import { describe, expect, it } from 'vitest';
import { mapRuleErrors, ruleLineNumbers, rulesToText, textToRules } from './rule-errors';

const texts = (deny = '', ask = '', allow = '') => ({ deny, ask, allow });

describe('rule error line mapping', () => {
  it('takes the list and line from the host problem params (the permissions domain shape)', () => {
    const details = [{ code: 'invalid_rule', field: 'permissions.allow[1]', line: 2, message: 'line 2: "Tool(" : unbalanced', params: { list: 'allow', line: 2, text: 'Tool(', reason: 'unbalanced' } }];
    const { lines, other } = mapRuleErrors(details, texts('', '', 'Effect(read)\nTool('));
    expect(lines).toEqual([{ list: 'allow', line: 2, message: '"Tool(" : unbalanced' }]);
    expect(other).toEqual([]);
  });

  it('turns the host rule number into the text-area line when blank lines are in between', () => {
    const text = 'Command(rm:*)\n\n\nBad(';
    expect(ruleLineNumbers(text)).toEqual([1, 4]);
    const { lines } = mapRuleErrors([{ code: 'invalid_rule', params: { list: 'deny', line: 2 }, message: 'bad' }], texts(text));
    expect(lines[0]).toMatchObject({ list: 'deny', line: 4 });
  });

  it('falls back to 0-based field indexes and to "line N" in the message', () => {
    expect(mapRuleErrors([{ field: 'permissions.ask[0]', message: 'x' }], texts('', 'A(')).lines[0]).toMatchObject({ list: 'ask', line: 1 });
    expect(mapRuleErrors([{ field: 'permissions.deny.2', message: 'x' }], texts('a\nb\nc')).lines[0]).toMatchObject({ list: 'deny', line: 3 });
    expect(mapRuleErrors([{ field: 'permissions.allow', message: 'line 5 is bad' }], texts()).lines[0]).toMatchObject({ list: 'allow', line: 5 });
  });

  it('keeps problems that name no rule line, and ignores junk', () => {
    const { lines, other } = mapRuleErrors([{ field: 'hooks[0].url', message: 'bad url' }, null, 'x', { code: 'unknown_section' }], texts());
    expect(lines).toEqual([]);
    expect(other).toEqual(['hooks[0].url: bad url', 'unknown_section']);
    expect(mapRuleErrors(undefined, texts())).toEqual({ lines: [], other: [] });
    expect(mapRuleErrors([{ params: { list: 'nope', line: 1 }, message: 'm' }], texts()).lines).toEqual([]);
    expect(mapRuleErrors([{ params: { list: 'deny', line: -1 }, message: 'm' }], texts()).lines).toEqual([]);
  });

  it('converts between text areas and rule lists (one rule per line, blanks dropped)', () => {
    expect(textToRules('  Effect(read) \r\n\nTool(x)\n')).toEqual(['Effect(read)', 'Tool(x)']);
    expect(rulesToText(['a', 'b'])).toBe('a\nb');
    expect(rulesToText(undefined)).toBe('');
  });
});
