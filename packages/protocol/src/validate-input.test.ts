import { describe, expect, it } from 'vitest';
import { localize } from './i18n/index';
import { type ToolInfo, validatePlan } from './validate';

const echo: ToolInfo = { name: 'echo', inputSchema: { type: 'object', properties: { value: {} } }, effect: 'read', idempotent: false, source: 'builtin', available: true };
const ctx = { tool: (n: string) => (n === 'echo' ? echo : undefined), inputNames: new Set<string>(), readOnly: true };
const problems = (plan: unknown) => {
  const r = validatePlan(plan, ctx);
  return r.ok ? [] : r.problems;
};
const at = (plan: unknown) => problems(plan).map((p) => `${p.code}@${p.stepId}.${p.field}`);
const form = { type: 'object', properties: { discount: { type: 'number', title: 'Discount' }, note: { type: 'string', maxLength: 5 } }, required: ['discount'] };

describe('input steps in plans', () => {
  it('accepts an input step whose result later steps and conditions read, even in read-only mode', () => {
    const plan = {
      steps: [
        { id: 'ask', kind: 'input', title: 'Approve the discount', form, timeoutMs: 60_000, onTimeout: 'default', defaults: { discount: 0 } },
        { id: 'big', kind: 'condition', dependsOn: ['ask'], cases: [{ name: 'yes', when: { all: [{ left: '{{node.ask.result.discount}}', op: 'gt', right: 10 }] } }] },
        { id: 'say', tool: 'echo', arguments: { value: 'discount {{node.ask.result.discount}}' }, dependsOn: ['big:yes'] },
      ],
    };
    expect(problems(plan)).toEqual([]);
  });

  it('names the step and field of every problem: form, timeout, onTimeout, defaults, foreign fields', () => {
    const plan = {
      steps: [
        { id: 'a', kind: 'input', form: { type: 'object', properties: { x: { type: 'date' } } }, timeoutMs: 1000, onTimeout: 'later', tool: 'echo', retry: { maxAttempts: 2 } },
        { id: 'b', kind: 'input', form, onTimeout: 'default' },
        { id: 'c', kind: 'input', form, onTimeout: 'default', defaults: { discount: 'ten', note: 'too long', extra: 1 } },
        { id: 'd', kind: 'input' },
        { id: 'e', tool: 'echo', form, onTimeout: 'fail', defaults: {} },
      ],
    };
    expect(at(plan).sort()).toEqual(
      [
        'input_form_invalid@a.form.properties.x.type',
        'input_timeout_range@a.timeoutMs',
        'input_on_timeout_invalid@a.onTimeout',
        'step_field_not_allowed@a.tool',
        'step_field_not_allowed@a.retry',
        'input_defaults_required@b.defaults',
        'input_defaults_invalid@c.defaults.discount',
        'input_defaults_invalid@c.defaults.note',
        'input_defaults_invalid@c.defaults.extra',
        'step_field_required@d.form',
        'step_field_not_allowed@e.form',
        'step_field_not_allowed@e.onTimeout',
        'step_field_not_allowed@e.defaults',
      ].sort(),
    );
    const byCode = new Map(problems(plan).map((p) => [p.code, p]));
    const range = byCode.get('input_timeout_range');
    expect(localize('input_timeout_range', range?.params ?? {}, 'en')).toContain('"a"');
    expect(localize('input_defaults_invalid', byCode.get('input_defaults_invalid')?.params ?? {}, 'zh-CN')).toContain('输入步骤“c”');
    expect(localize('input_form_invalid', byCode.get('input_form_invalid')?.params ?? {}, 'en')).toMatch(/^Step "a": the form is not valid at form\.properties\.x\.type/);
  });

  it('refuses an input step inside a forEach body (input_in_foreach)', () => {
    const plan = { steps: [{ id: 'each', kind: 'forEach', items: [1, 2], steps: [{ id: 'ask', kind: 'input', form }] }] };
    expect(at(plan)).toEqual(['input_in_foreach@ask.kind']);
  });

  it('keeps the 7-day default and both bounds of the wait', () => {
    expect(at({ steps: [{ id: 'a', kind: 'input', form, timeoutMs: 2_592_000_000 }] })).toEqual([]);
    expect(at({ steps: [{ id: 'a', kind: 'input', form, timeoutMs: 2_592_000_001 }] })).toEqual(['input_timeout_range@a.timeoutMs']);
    expect(at({ steps: [{ id: 'a', kind: 'input', form, timeoutMs: 59_999 }] })).toEqual(['input_timeout_range@a.timeoutMs']);
  });
});
