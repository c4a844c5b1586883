import { describe, expect, it } from 'vitest';
import { stepPorts } from './control-flow';
import { localize } from './i18n/index';
import { type ToolInfo, validatePlan } from './validate';

const tool = (name: string, effect: ToolInfo['effect'] = 'read'): ToolInfo => ({ name, inputSchema: { type: 'object', properties: { value: {} } }, effect, idempotent: false, source: 'builtin', available: true });
const tools: Record<string, ToolInfo> = { echo: tool('echo'), send: tool('send', 'external') };
const ctx = { tool: (n: string) => tools[n], inputNames: new Set<string>() };
const problems = (plan: unknown) => {
  const r = validatePlan(plan, ctx);
  return r.ok ? [] : r.problems;
};

describe('step timeoutMs', () => {
  it('accepts 1000..3600000 on tool and model steps', () => {
    for (const timeoutMs of [1000, 30_000, 3_600_000]) {
      expect(problems({ steps: [{ id: 'a', tool: 'echo', timeoutMs }, { id: 'm', instruction: 'x', timeoutMs }] })).toEqual([]);
    }
  });

  it.each([0, 999, 3_600_001, -5])('refuses %s with step_timeout_range, naming the step and the bounds in both languages', (timeoutMs) => {
    const [p, ...rest] = problems({ steps: [{ id: 'slow', tool: 'echo', timeoutMs }] });
    expect(rest).toEqual([]);
    expect(p).toMatchObject({ code: 'step_timeout_range', stepId: 'slow', field: 'timeoutMs' });
    expect(localize(p?.code as string, p?.params)).toBe(`Step "slow": timeoutMs must be an integer between 1000 and 3600000 milliseconds (1 s to 1 h), not ${timeoutMs}.`);
    expect(localize(p?.code as string, p?.params, 'zh-CN')).toContain('timeoutMs 必须是 1000 到 3600000');
  });

  it('refuses a fractional timeout and a timeout on a forEach (its body steps take their own)', () => {
    expect(problems({ steps: [{ id: 'a', tool: 'echo', timeoutMs: 1500.5 }] }).length).toBeGreaterThan(0);
    const loop = { id: 'each', kind: 'forEach', items: [1, 2], timeoutMs: 5000, steps: [{ id: 'b', tool: 'echo', timeoutMs: 5000 }] };
    expect(problems({ steps: [loop] })).toMatchObject([{ code: 'step_field_not_allowed', stepId: 'each', field: 'timeoutMs' }]);
  });
});

describe('onError ports', () => {
  it('a step set to branch offers ok and error; a condition set to branch adds error to its cases; others none', () => {
    expect(stepPorts({ tool: 'echo', onError: 'branch' })).toEqual(['ok', 'error']);
    expect(stepPorts({ tool: 'echo', onError: 'continue' })).toEqual([]);
    expect(stepPorts({ tool: 'echo' })).toEqual([]);
    expect(stepPorts({ kind: 'condition', cases: [{ name: 'big' }], onError: 'branch' })).toEqual(['big', 'else', 'error']);
  });

  it('dependsOn may name x:ok and x:error only when x branches on error', () => {
    const plan = (onError?: string) => ({
      steps: [
        { id: 'x', tool: 'send', ...(onError ? { onError } : {}) },
        { id: 'good', tool: 'echo', dependsOn: ['x:ok'] },
        { id: 'bad', tool: 'echo', dependsOn: ['x:error'] },
      ],
    });
    expect(problems(plan('branch'))).toEqual([]);
    for (const mode of [undefined, 'fail', 'continue']) {
      expect(problems(plan(mode)).map((p) => [p.code, p.stepId])).toEqual([
        ['step_unknown_dependency', 'good'],
        ['step_unknown_dependency', 'bad'],
      ]);
    }
  });

  it('refuses an unknown onError mode', () => {
    expect(problems({ steps: [{ id: 'x', tool: 'echo', onError: 'ignore' }] }).length).toBeGreaterThan(0);
  });
});
