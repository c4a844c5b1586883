import { describe, expect, it } from 'vitest';
import { localize } from './i18n/index';
import { type ToolInfo, validatePlan } from './validate';

const tool = (name: string, effect: ToolInfo['effect'] = 'read'): ToolInfo => ({
  name,
  inputSchema: { type: 'object', properties: { value: {}, to: { type: 'string' } } },
  effect,
  idempotent: false,
  source: 'builtin',
  available: true,
});
const tools: Record<string, ToolInfo> = { echo: tool('echo'), send: tool('send', 'external') };
const ctx = { tool: (n: string) => tools[n], inputNames: new Set<string>(['limit']) };
const problems = (plan: unknown) => {
  const r = validatePlan(plan, ctx);
  return r.ok ? [] : r.problems;
};
const codes = (plan: unknown) => problems(plan).map((p) => p.code).sort();

/** The headline scenario: split, then per part a condition on the row count, two mail paths and a join. */
const headline = {
  steps: [
    { id: 'split', tool: 'echo', arguments: { value: [] } },
    {
      id: 'each',
      kind: 'forEach',
      items: '{{node.split.result.files}}',
      concurrency: 2,
      dependsOn: ['split'],
      steps: [
        { id: 'check', kind: 'condition', cases: [{ name: 'big', when: { all: [{ left: '{{item.rows}}', op: 'gt', right: 1000 }] } }] },
        { id: 'manager', tool: 'send', arguments: { to: 'boss@example.com', value: '{{item.path}}' }, dependsOn: ['check:big'] },
        { id: 'team', tool: 'send', arguments: { to: 'team@example.com', value: 'part {{index}}' }, dependsOn: ['check:else'] },
        { id: 'done', tool: 'echo', arguments: { value: '{{node.manager.result}}{{node.team.result}}' }, dependsOn: ['manager', 'team'], join: 'any' },
      ],
    },
    { id: 'report', tool: 'echo', arguments: { value: '{{node.each.result}}' }, dependsOn: ['each'] },
  ],
};

describe('control flow in plans', () => {
  it('accepts conditions, ports, joins, a forEach with item and index, and a model condition', () => {
    expect(problems(headline)).toEqual([]);
    const model = {
      steps: [
        { id: 'ask', kind: 'condition', instruction: 'Is the mail a complaint?', cases: [{ name: 'complaint', description: 'the customer is unhappy' }] },
        { id: 'a', tool: 'echo', dependsOn: ['ask:complaint'] },
        { id: 'b', tool: 'echo', dependsOn: ['ask:else'] },
        { id: 'c', tool: 'echo', dependsOn: ['ask'] },
      ],
    };
    expect(problems(model)).toEqual([]);
  });

  it('keeps every operator of §8 valid with its right side', () => {
    const ops: [string, unknown?][] = [['eq', 1], ['ne', 'x'], ['gt', 1], ['gte', 1], ['lt', 1], ['lte', 1], ['contains', 'a'], ['startsWith', 'a'], ['endsWith', 'a'], ['in', [1, 2]], ['matches', '^a+$'], ['exists'], ['empty']];
    const when = { any: ops.map(([op, right]) => (right === undefined ? { left: '{{inputs.limit}}', op } : { left: '{{inputs.limit}}', op, right })) };
    expect(problems({ steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when }] }] })).toEqual([]);
  });

  const hostile: [string, unknown, string, string?][] = [
    ['unknown operator', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ left: 1, op: 'like', right: 1 }] } }] }] }, 'condition_operator_unknown', 'cases[0].when.all[0].op'],
    ['missing right', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ left: 1, op: 'gt' }] } }] }] }, 'condition_right_missing', 'cases[0].when.all[0].right'],
    ['missing left', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ op: 'exists' }] } }] }] }, 'condition_left_missing'],
    ['bad regex', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ left: 'a', op: 'matches', right: '(' }] } }] }] }, 'condition_regex_invalid'],
    ['long regex', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ left: 'a', op: 'matches', right: 'a'.repeat(201) }] } }] }] }, 'condition_regex_too_long'],
    ['in without array', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ left: 'a', op: 'in', right: 'abc' }] } }] }] }, 'condition_in_not_array'],
    ['when with both keys', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ left: 1, op: 'exists' }], any: [{ left: 1, op: 'exists' }] } }] }] }, 'condition_when_invalid'],
    ['empty when', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [] } }] }] }, 'condition_when_invalid'],
    ['no cases', { steps: [{ id: 'c', kind: 'condition', cases: [] }] }, 'condition_cases_count'],
    ['21 cases', { steps: [{ id: 'c', kind: 'condition', cases: Array.from({ length: 21 }, (_, i) => ({ name: `c${i}`, when: { all: [{ left: 1, op: 'exists' }] } })) }] }, 'condition_cases_count'],
    ['case named else', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'else', when: { all: [{ left: 1, op: 'exists' }] } }] }] }, 'condition_case_name_reserved'],
    ['case named error', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'error', when: { all: [{ left: 1, op: 'exists' }] } }] }] }, 'condition_case_name_reserved'],
    ['upper-case name', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'Big', when: { all: [{ left: 1, op: 'exists' }] } }] }] }, 'condition_case_name_invalid'],
    ['duplicate case', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'a', when: { all: [{ left: 1, op: 'exists' }] } }, { name: 'a', when: { all: [{ left: 1, op: 'exists' }] } }] }] }, 'condition_case_duplicate'],
    ['structured case without when', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'a' }] }] }, 'condition_case_when_required'],
    ['model case without description', { steps: [{ id: 'c', kind: 'condition', instruction: 'pick', cases: [{ name: 'a' }] }] }, 'condition_case_description_required'],
    ['condition without cases', { steps: [{ id: 'c', kind: 'condition' }] }, 'step_field_required', 'cases'],
    ['condition with a tool', { steps: [{ id: 'c', kind: 'condition', tool: 'echo', cases: [{ name: 'a', when: { all: [{ left: 1, op: 'exists' }] } }] }] }, 'step_field_not_allowed', 'tool'],
    ['tool kind without tool', { steps: [{ id: 't', kind: 'tool' }] }, 'step_field_required', 'tool'],
    ['unknown port', { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'a', when: { all: [{ left: 1, op: 'exists' }] } }] }, { id: 'x', tool: 'echo', dependsOn: ['c:b'] }] }, 'step_unknown_dependency', 'dependsOn'],
    ['port on a tool step', { steps: [{ id: 'a', tool: 'echo' }, { id: 'x', tool: 'echo', dependsOn: ['a:ok'] }] }, 'step_unknown_dependency'],
    ['item outside a loop', { steps: [{ id: 'a', tool: 'echo', arguments: { value: '{{item.x}}' } }] }, 'ref_item_outside_loop', 'arguments.value'],
    ['index outside a loop', { steps: [{ id: 'a', tool: 'echo', arguments: { value: 'n{{index}}' } }] }, 'ref_item_outside_loop'],
    ['item in the loop list itself', { steps: [{ id: 'l', kind: 'forEach', items: '{{item}}', steps: [{ id: 'b', tool: 'echo' }] }] }, 'ref_item_outside_loop', 'items'],
    ['nested loop', { steps: [{ id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'm', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'echo' }] }] }] }, 'foreach_nested'],
    ['literal non-list items', { steps: [{ id: 'l', kind: 'forEach', items: 'abc', steps: [{ id: 'b', tool: 'echo' }] }] }, 'foreach_items_not_array', 'items'],
    ['concurrency 9', { steps: [{ id: 'l', kind: 'forEach', items: [1], concurrency: 9, steps: [{ id: 'b', tool: 'echo' }] }] }, 'foreach_concurrency_range'],
    ['maxItems 10001', { steps: [{ id: 'l', kind: 'forEach', items: [1], maxItems: 10001, steps: [{ id: 'b', tool: 'echo' }] }] }, 'foreach_max_items_range'],
    ['empty body', { steps: [{ id: 'l', kind: 'forEach', items: [1], steps: [] }] }, 'foreach_body_size'],
    ['loop without items', { steps: [{ id: 'l', kind: 'forEach', steps: [{ id: 'b', tool: 'echo' }] }] }, 'step_field_required', 'items'],
    ['outer step reads a body step', { steps: [{ id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'echo' }] }, { id: 'o', tool: 'echo', arguments: { value: '{{node.b.result}}' }, dependsOn: ['l'] }] }, 'ref_body_step'],
    ['outer step depends on a body step', { steps: [{ id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'echo' }] }, { id: 'o', tool: 'echo', dependsOn: ['b'] }] }, 'foreach_body_dependency'],
    ['body step depends on an outer step', { steps: [{ id: 'a', tool: 'echo' }, { id: 'l', kind: 'forEach', items: [1], dependsOn: ['a'], steps: [{ id: 'b', tool: 'echo', dependsOn: ['a'] }] }] }, 'foreach_body_dependency'],
    ['body reads an outer step that is not a loop prerequisite', { steps: [{ id: 'a', tool: 'echo' }, { id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'echo', arguments: { value: '{{node.a.result}}' } }] }] }, 'ref_not_prerequisite'],
    ['body id reused outside', { steps: [{ id: 'b', tool: 'echo' }, { id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'echo' }] }] }, 'step_duplicate_id'],
    ['cycle inside a body', { steps: [{ id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'echo', dependsOn: ['c'] }, { id: 'c', tool: 'echo', dependsOn: ['b'] }] }] }, 'plan_cycle'],
    ['unknown tool inside a body', { steps: [{ id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'nope' }] }] }, 'step_unknown_tool'],
    ['unknown kind', { steps: [{ id: 'a', kind: 'loop', tool: 'echo' }] }, 'plan_schema'],
    ['bad join', { steps: [{ id: 'a', tool: 'echo', join: 'some' }] }, 'plan_schema'],
  ];

  it.each(hostile)('refuses %s', (_name, plan, code, field) => {
    const found = problems(plan).find((p) => p.code === code);
    expect(found, JSON.stringify(problems(plan))).toBeDefined();
    if (field) expect(found?.field).toBe(field);
    // every problem message exists in both languages and names the step
    const text = localize(code, found?.params ?? {}, 'en');
    const zh = localize(code, found?.params ?? {}, 'zh-CN');
    if (found?.stepId) {
      expect(text).toContain(found.stepId);
      expect(zh).toContain(found.stepId);
    }
    expect(zh).not.toBe(text);
  });

  it('lists every problem of several steps in one answer', () => {
    const plan = {
      steps: [
        { id: 'c', kind: 'condition', cases: [{ name: 'else', when: { all: [{ left: 1, op: 'like' }] } }] },
        { id: 'x', tool: 'echo', dependsOn: ['c:nope'], arguments: { value: '{{index}}' } },
      ],
    };
    expect(codes(plan)).toEqual(['condition_case_name_reserved', 'condition_operator_unknown', 'ref_item_outside_loop', 'step_unknown_dependency']);
  });

  it('counts body steps once against the 64-step limit', () => {
    const body = Array.from({ length: 32 }, (_, i) => ({ id: `b${i}`, tool: 'echo' }));
    const top = Array.from({ length: 31 }, (_, i) => ({ id: `t${i}`, tool: 'echo' }));
    expect(codes({ steps: [...top, { id: 'l', kind: 'forEach', items: [1], steps: body }] })).toEqual([]);
    expect(codes({ steps: [...top, { id: 't31', tool: 'echo' }, { id: 'l', kind: 'forEach', items: [1], steps: body }] })).toEqual(['plan_too_many_steps']);
  });

  it('keeps conditions and loops in read-only mode, but not a model condition', () => {
    const ro = { ...ctx, readOnly: true };
    const plan = { steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'a', when: { all: [{ left: 1, op: 'exists' }] } }] }, { id: 'l', kind: 'forEach', items: [1], steps: [{ id: 'b', tool: 'echo' }] }] };
    expect(validatePlan(plan, ro).ok).toBe(true);
    const model = { steps: [{ id: 'c', kind: 'condition', instruction: 'pick', cases: [{ name: 'a', description: 'yes' }] }] };
    const r = validatePlan(model, ro);
    expect(r.ok ? [] : r.problems.map((p) => p.code)).toEqual(['read_only_step']);
  });
});
