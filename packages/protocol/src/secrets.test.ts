import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveValue } from './references';
import { planSecretNames, redactionList, redactText, redactValue, SECRET_NAME_RE, secretProblems } from './secrets';
import { validatePlan } from './validate';

const tool = { name: 'echo', inputSchema: { type: 'object' }, effect: 'read' as const, idempotent: true, source: 'builtin' as const, available: true };
const ctx = (names: string[]) => ({ tool: (n: string) => (n === 'echo' ? tool : undefined), inputNames: new Set<string>(), secretNames: new Set(names) });

describe('secret references', () => {
  it('accepts a known secret in a tool step argument, alone or inside text', () => {
    const plan = { steps: [{ id: 'a', tool: 'echo', arguments: { key: '{{secrets.API_KEY}}', header: 'Bearer {{ secrets.API_KEY }}' } }] };
    expect(validatePlan(plan, ctx(['API_KEY'])).ok).toBe(true);
    expect(planSecretNames(plan)).toEqual(['API_KEY']);
  });

  it('refuses an unknown name and every place other than tool arguments', () => {
    const plan = {
      goal: 'use {{secrets.API_KEY}}',
      steps: [
        { id: 'a', tool: 'echo', arguments: { key: '{{secrets.NOPE}}' } },
        { id: 'm', instruction: 'Say {{secrets.API_KEY}}' },
        { id: 't', title: '{{secrets.API_KEY}}', tool: 'echo', arguments: {} },
      ],
    };
    const r = validatePlan(plan, ctx(['API_KEY']));
    expect(r.ok).toBe(false);
    const got = r.ok ? [] : r.problems.map((p) => `${p.code}@${p.stepId ?? ''}.${p.field}`);
    expect(got).toEqual(expect.arrayContaining(['secret_not_allowed_here@.goal', 'secret_unknown@a.arguments.key', 'secret_not_allowed_here@m.instruction', 'secret_not_allowed_here@t.title']));
  });

  it('checks forEach bodies, conditions and input forms generically (any key but a tool step’s arguments)', () => {
    const plan = {
      steps: [
        { id: 'c', kind: 'condition', cases: [{ name: 'x', when: { all: [{ left: '{{secrets.K}}', op: 'exists' }] } }] },
        { id: 'f', kind: 'forEach', items: '{{secrets.K}}', steps: [{ id: 'b', tool: 'echo', arguments: { k: '{{secrets.K}}', z: '{{secrets.Z}}' } }] },
        { id: 'i', kind: 'input', form: { type: 'object', properties: { a: { type: 'string', default: '{{secrets.K}}' } } } },
      ],
    };
    const codes = secretProblems(plan, new Set(['K'])).map((p) => `${p.code}@${p.stepId}.${p.field}`);
    expect(codes).toEqual(['secret_not_allowed_here@c.cases[0].when.all[0].left', 'secret_not_allowed_here@f.items', 'secret_unknown@b.arguments.z', 'secret_not_allowed_here@i.form.properties.a.default']);
    expect(planSecretNames(plan)).toEqual(['K', 'Z']);
  });

  it('keeps the placeholder as written until a value is given, then substitutes it', () => {
    const scope = { stepIds: [], results: new Map(), dependsOn: [], inputs: {} };
    const args = { a: '{{secrets.K}}', b: 'x-{{secrets.K}}-y' };
    expect(resolveValue(args, scope)).toEqual(args);
    expect(resolveValue(args, { ...scope, secret: () => 'v4lue' })).toEqual({ a: 'v4lue', b: 'x-v4lue-y' });
    expect(() => resolveValue(args, { ...scope, secret: () => undefined })).toThrow(/resolved to nothing/);
  });

  it('names follow the pattern', () => {
    for (const ok of ['A', '_x', 'API_KEY_2', 'a'.repeat(64)]) expect(SECRET_NAME_RE.test(ok)).toBe(true);
    for (const bad of ['', '1A', 'a-b', 'a.b', 'a'.repeat(65), 'ä']) expect(SECRET_NAME_RE.test(bad)).toBe(false);
  });
});

describe('redaction of values', () => {
  it('replaces every exact occurrence of a value of 4+ characters, longest first, keys too', () => {
    const list = redactionList([
      { name: 'SHORT', value: 'abc' },
      { name: 'TOKEN', value: 's3cr3t' },
      { name: 'LONG', value: 'xx-s3cr3t-xx' },
    ]);
    expect(redactText('a xx-s3cr3t-xx b s3cr3t abc', list)).toBe('a [redacted:LONG] b [redacted:TOKEN] abc');
    const v = { out: ['s3cr3t', 1, null], s3cr3t: true };
    expect(redactValue(v, list)).toEqual({ out: ['[redacted:TOKEN]', 1, null], '[redacted:TOKEN]': true });
    const clean = { a: ['b'] };
    expect(redactValue(clean, list)).toBe(clean);
  });

  it('property: no listed value survives in the redacted JSON', () => {
    const value = fc.string({ minLength: 4, maxLength: 12 }).filter((s) => !s.includes('[') && !s.includes(']'));
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 3 }), fc.jsonValue(), (values, json) => {
        const list = redactionList(values.map((v, i) => ({ name: `S${i}`, value: v })));
        const planted = { json, text: `pre${values.join('|')}post`, [values[0] as string]: 1 };
        const out = redactValue(planted, list);
        const text = JSON.stringify(out);
        for (const s of list) if (!'[redacted:S0123456789]'.includes(s.value)) expect(text.includes(JSON.stringify(s.value).slice(1, -1))).toBe(false);
      }),
    );
  });
});
