import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostText, MESSAGES } from '@fengyu/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { needsStepGate } from '../agent/decide';
import { evaluateCall } from './evaluate';
import { parseRuleLines } from './rules';
import { type BashParser, loadBashParser } from './shell-parser';

/**
 * The reasons the permission guard writes are the tables' English (protocol i18n/approvals.ts),
 * so a person reads them in the UI's language: every reason of the dangerous-command floor has
 * its message, and a rule's, the floor's and the analysis's reasons read back into Chinese whole.
 */

const HAN = /\p{Script=Han}/u;
let parser: BashParser;
beforeAll(async () => {
  parser = await loadBashParser();
});

/** Every reason text the floor and git's floor can give, as written in their sources. */
function floorTexts(): string[] {
  const out = new Set<string>();
  for (const f of ['floor.ts', 'git.ts']) {
    const src = readFileSync(join(import.meta.dirname, f), 'utf8');
    for (const m of src.matchAll(/reason: '([^']*)'/g)) out.add(m[1] as string);
    for (const m of src.matchAll(/^\s+(?:[\w.]+|'[^']*'): '([^']*)',\s*$/gm)) out.add(m[1] as string);
  }
  return [...out];
}

const command = (cmd: string, lines: { deny?: string[]; ask?: string[]; allow?: string[] } = {}) =>
  evaluateCall(parser, { call: { name: 'execute_command', effect: 'command', source: 'builtin', arguments: { command: cmd } }, mode: 'ask', rules: parseRuleLines({ deny: [], ask: [], allow: [], ...lines }).rules });

describe('approval reasons in both languages', () => {
  it('has a message for every reason of the dangerous-command floor (a new one fails here until translated)', () => {
    const texts = floorTexts();
    expect(texts.length).toBeGreaterThan(50);
    const known = new Set(Object.entries(MESSAGES.en).filter(([k]) => k.startsWith('floor_reason_')).map(([, v]) => v));
    expect(texts.filter((t) => !known.has(t))).toEqual([]);
  });

  it("says a rule's, the floor's and the analysis's reasons in Chinese, with the rule and command as data", () => {
    const cases = [
      command('rm -rf build'),
      command('git push', { deny: ['Bash(git push:*)'] }),
      command('ls && git push', { ask: ['Bash(git push:*)'] }),
      command('ls', { allow: ['Bash(*)'] }),
      evaluateCall(parser, { call: { name: 'send_message', effect: 'external', source: 'builtin', arguments: {} }, mode: 'ask', rules: parseRuleLines({ deny: [], ask: [], allow: ['Tool(send_message)'] }).rules }),
    ];
    for (const d of cases) {
      const zh = hostText(d.reason, 'zh-CN');
      expect(zh, d.reason).not.toBe(d.reason);
      expect(HAN.test(zh), d.reason).toBe(true);
      // what is left in Latin letters is the rule or the command itself
      expect(zh.replace(/Bash\([^)]*\)|Tool\([^)]*\)|"[^"]*"|“[^”]*”|rm|git|push|ls|send_message/g, ''), d.reason).not.toMatch(/[A-Za-z]{3,}/);
    }
  });

  it("says why a step gate waits (every step approved, or a step set to need approval) in Chinese, with no field names", () => {
    const step = { id: 's', tool: 'confirm_send', requiresApproval: true };
    const reasons = [needsStepGate(step, { stepApproval: true, permissionMode: 'ask' }), needsStepGate(step, { stepApproval: false, permissionMode: 'approve-for-me' })];
    expect(needsStepGate(step, { stepApproval: false, permissionMode: 'full-access' })).toBeUndefined();
    for (const reason of reasons) {
      expect(reason).toBeDefined();
      expect(reason, 'a sentence for people, not a field name').not.toMatch(/requiresApproval|stepApproval/);
      const zh = hostText(reason as string, 'zh-CN');
      expect(HAN.test(zh), reason).toBe(true);
      expect(zh, reason).not.toMatch(/[A-Za-z]{3,}/);
    }
    expect(new Set(reasons).size).toBe(2);
  });
});
