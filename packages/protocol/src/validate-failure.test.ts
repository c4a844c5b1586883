import { describe, expect, it } from 'vitest';
import { stepPorts } from './control-flow';
import { localize } from './i18n/index';
import { parseReference, resolveString, UnresolvedReferenceError } from './references';
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

describe('{{node.<id>.error}}', () => {
  const scope = (errors: Record<string, { code: string; message: string }>, results: Record<string, unknown>, skipped: string[] = []) => ({
    stepIds: ['x', 'y'],
    results: new Map(Object.entries(results)),
    errors: new Map(Object.entries(errors)),
    skipped: new Set(skipped),
    dependsOn: ['x'],
    inputs: {},
  });

  it('parses as a node reference to the error field, path kept', () => {
    expect(parseReference('node.x.error.code')).toMatchObject({ ok: true, ref: { kind: 'node', id: 'x', field: 'error', path: ['code'] } });
    expect(parseReference('node.x.result')).toMatchObject({ ok: true, ref: { kind: 'node', id: 'x', path: [] } });
    expect(parseReference('node.x.result')).not.toHaveProperty('ref.field');
    expect(parseReference('node.x.errors').ok).toBe(false);
  });

  it('is {code, message} for a failed step the run went past, null for one that succeeded or was skipped, unresolved before it ends', () => {
    const failed = scope({ x: { code: 'command_exit_nonzero', message: 'exit 3' } }, { x: null });
    expect(resolveString('{{node.x.error}}', failed)).toEqual({ code: 'command_exit_nonzero', message: 'exit 3' });
    expect(resolveString('code={{node.x.error.code}}', failed)).toBe('code=command_exit_nonzero');
    expect(resolveString('{{node.x.result}}', failed)).toBeNull();
    expect(resolveString('{{node.x.error}}', scope({}, { x: 5 }))).toBeNull();
    expect(resolveString('{{node.x.error}}', scope({}, {}, ['x']))).toBeNull();
    expect(() => resolveString('{{node.x.error}}', scope({}, {}))).toThrow(UnresolvedReferenceError);
    expect(() => resolveString('{{node.x.error.code}}', scope({}, { x: 5 }))).toThrow(UnresolvedReferenceError);
  });

  it('the validator accepts it in arguments and conditions of a dependent, and refuses it from a step that is not one', () => {
    const plan = {
      steps: [
        { id: 'x', tool: 'send', onError: 'continue' },
        { id: 'y', tool: 'echo', dependsOn: ['x'], arguments: { value: 'failed with {{node.x.error.code}}' } },
        { id: 'c', kind: 'condition', dependsOn: ['x'], cases: [{ name: 'bad', when: { all: [{ left: '{{node.x.error}}', op: 'exists' }] } }] },
      ],
    };
    expect(problems(plan)).toEqual([]);
    const unrelated = { steps: [{ id: 'x', tool: 'send', onError: 'continue' }, { id: 'y', tool: 'echo', arguments: { value: '{{node.x.error}}' } }] };
    expect(problems(unrelated).map((p) => p.code)).toEqual(['ref_not_prerequisite']);
    expect(problems({ steps: [{ id: 'y', tool: 'echo', arguments: { value: '{{node.nope.error}}' } }] }).map((p) => p.code)).toEqual(['ref_unknown_step']);
  });
});
