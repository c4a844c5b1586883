import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formProblems, valueProblems } from './input-form';

const form = {
  type: 'object',
  required: ['discount', 'approver'],
  properties: {
    discount: { type: 'integer', title: 'Discount %', minimum: 0, maximum: 50 },
    approver: { type: 'string', format: 'email' },
    region: { type: 'string', enum: ['north', 'south'] },
    note: { type: 'string', maxLength: 5 },
    due: { type: 'string', format: 'date' },
    link: { type: 'string', format: 'uri' },
    urgent: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    rate: { type: 'number' },
  },
};

describe('input forms', () => {
  it('accepts the property types of an input step', () => {
    expect(formProblems(form)).toEqual([]);
  });

  it.each([
    [null, 'form'],
    [{ type: 'object', properties: {} }, 'form.properties'],
    [{ type: 'object', properties: { a: { type: 'object' } } }, 'form.properties.a.type'],
    [{ type: 'object', properties: { a: { type: 'array', items: { type: 'number' } } } }, 'form.properties.a.items'],
    [{ type: 'object', properties: { a: { type: 'string', format: 'ipv4' } } }, 'form.properties.a.format'],
    [{ type: 'object', properties: { a: { type: 'string', enum: [] } } }, 'form.properties.a.enum'],
    [{ type: 'object', properties: { a: { type: 'string', pattern: 'x' } } }, 'form.properties.a'],
    [{ type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }, 'form.required'],
    [{ type: 'object', properties: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`f${i}`, { type: 'string' }])) }, 'form.properties'],
  ])('refuses a bad form (%#), naming where', (bad, field) => {
    expect(formProblems(bad).map((p) => p.field)).toContain(field);
  });

  it('lists every field that does not fit, and nothing for values that do', () => {
    expect(valueProblems(form, { discount: 10, approver: 'a@b.co', region: 'south', note: 'ok', due: '2026-12-24', link: 'https://x.example/a', urgent: false, tags: ['a'], rate: 1.5 })).toEqual([]);
    const problems = valueProblems(form, { discount: 10.5, region: 'west', note: 'too long', due: '24.12.2026', link: 'nope', urgent: 'yes', tags: [1], extra: 1 });
    expect(problems.map((p) => p.field).sort()).toEqual(['values.approver', 'values.discount', 'values.due', 'values.extra', 'values.link', 'values.note', 'values.region', 'values.tags', 'values.urgent'].sort());
    expect(Object.fromEntries(problems.map((p) => [p.field, p.code]))).toEqual({
      'values.approver': 'input_value_required',
      'values.discount': 'input_value_not_integer',
      'values.due': 'input_value_date',
      'values.extra': 'input_value_unknown',
      'values.link': 'input_value_uri',
      'values.note': 'input_value_too_long',
      'values.region': 'input_value_enum',
      'values.tags': 'input_value_not_list',
      'values.urgent': 'input_value_not_boolean',
    });
    expect(valueProblems(form, { discount: 60, approver: 'a@b.co' }).map((p) => p.field)).toEqual(['values.discount']);
    expect(valueProblems(form, [1])[0]).toMatchObject({ field: 'values', code: 'input_value_not_object' });
  });

  it('a value of another type than its field is always named (property)', () => {
    const fields = { s: { type: 'string' }, n: { type: 'number' }, i: { type: 'integer' }, b: { type: 'boolean' }, a: { type: 'array', items: { type: 'string' } } } as const;
    const fits: Record<keyof typeof fields, fc.Arbitrary<unknown>> = { s: fc.string(), n: fc.double({ noNaN: true, noDefaultInfinity: true }), i: fc.integer(), b: fc.boolean(), a: fc.array(fc.string()) };
    fc.assert(
      fc.property(fc.constantFrom(...(Object.keys(fields) as Array<keyof typeof fields>)), fc.anything(), (name, value) => {
        const f = { type: 'object', properties: { [name]: fields[name] } };
        const fitsIt = fc.sample(fits[name], 1)[0];
        expect(valueProblems(f, { [name]: fitsIt })).toEqual([]);
        const problems = valueProblems(f, { [name]: value });
        const ok = value === null || value === undefined || (fields[name].type === 'string' ? typeof value === 'string' : fields[name].type === 'boolean' ? typeof value === 'boolean' : fields[name].type === 'array' ? Array.isArray(value) && value.every((x) => typeof x === 'string') : typeof value === 'number' && Number.isFinite(value) && (fields[name].type === 'number' || Number.isInteger(value)));
        expect(problems.length === 0).toBe(ok);
      }),
    );
  });
});
