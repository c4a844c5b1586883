import { describe, expect, it } from 'vitest';
import { RUN_STARTERS, runStarter } from '@fengyu/protocol';
import { createUiI18n, MESSAGES } from './index';

function flatten(value: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) for (const [kk, vv] of flatten(v, prefix ? `${prefix}.${k}` : k)) out.set(kk, vv);
  } else out.set(prefix, value);
  return out;
}

describe('i18n completeness', () => {
  const en = flatten(MESSAGES.en);
  const zh = flatten(MESSAGES['zh-CN']);

  it('both languages have the same keys', () => {
    expect([...zh.keys()].sort()).toEqual([...en.keys()].sort());
  });

  it('no value is empty', () => {
    for (const [k, v] of [...en, ...zh]) {
      expect(typeof v, k).toBe('string');
      expect(String(v).trim(), k).not.toBe('');
    }
  });

  it('uses the same placeholders in both languages', () => {
    const names = (s: unknown) => [...String(s).matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [k, v] of en) expect(names(zh.get(k)), k).toEqual(names(v));
  });

  it('every message compiles (no stray {{, @ or | that vue-i18n would misread)', () => {
    for (const locale of ['en', 'zh-CN'] as const) {
      const i18n = createUiI18n(locale) as unknown as { global: { t: (key: string, params: Record<string, unknown>) => string } };
      for (const [k] of en) {
        const text = i18n.global.t(k, { path: 'P', name: 'N', count: 1, n: 1, id: 'I', field: 'F', fields: 'F', reason: 'R', version: 1, index: 1, tool: 'T', ref: 'R', expected: 'E', actual: 'A', status: 'S' });
        expect(text, k).not.toBe(k);
        expect(text, k).not.toMatch(/\{\{|\}\}|[<>]/);
      }
    }
  });

  it('names every way a run starts in one vocabulary, whatever origin the host recorded', () => {
    // the origins the host writes (agent, workflows, tasks, schedules, webhooks, MCP, tools)
    const origins = ['api', 'workflow', 'task', 'workflow-schedule', 'workflow-webhook', 'workflow-tool', 'mcp', 'chat', 'retry', 'batch', 'fork', 'rewind', 'workflow-error', 'something-new', null];
    const labels = new Set(RUN_STARTERS.map((s) => en.get(`common.starters.${s}`)));
    expect(labels.size).toBe(RUN_STARTERS.length);
    for (const o of origins) {
      const s = runStarter(o);
      expect(RUN_STARTERS, String(o)).toContain(s);
      expect(en.get(`common.starters.${s}`), String(o)).toBeTypeOf('string');
      expect(zh.get(`common.starters.${s}`), String(o)).toBeTypeOf('string');
    }
    expect(runStarter('workflow')).toBe(runStarter('api'));
    expect(runStarter('workflow-webhook')).toBe('webhook');
    expect(runStarter('task')).toBe('task');
    expect(runStarter('workflow-error')).toBe('failure');
  });
});

