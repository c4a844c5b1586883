import fc from 'fast-check';
import { formProblems } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { formOfRows, INPUT_FIELD_TYPES, INPUT_FORMATS, newRow, rowsOfForm } from './input-form-edit';

const row = fc.record({
  title: fc.string({ maxLength: 8 }),
  type: fc.constantFrom(...INPUT_FIELD_TYPES),
  options: fc.constantFrom('', 'a, b', 'x'),
  format: fc.constantFrom(...INPUT_FORMATS),
  required: fc.boolean(),
  maxLength: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
});

describe('the Human Input form editor', () => {
  it('builds a form the validator accepts, and reads back the same form', () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 6 }), (drawn) => {
        const rows: ReturnType<typeof rowsOfForm> = [];
        for (const r of drawn) rows.push({ ...newRow(rows), ...r, extra: {} });
        const form = formOfRows(rows);
        expect(formProblems(form)).toEqual([]);
        expect(formOfRows(rowsOfForm(form))).toEqual(form);
      }),
    );
  });

  it('keeps keywords it does not model, drops choices off non-text fields, names new fields uniquely', () => {
    const form = { type: 'object', properties: { n: { type: 'number', minimum: 0, description: 'how many', enum: ['x'] } }, required: ['n'] };
    const rows = rowsOfForm(form);
    expect(rows[0]).toMatchObject({ name: 'n', type: 'number', required: true, extra: { minimum: 0, description: 'how many' } });
    expect(formOfRows(rows)).toEqual({ type: 'object', properties: { n: { type: 'number', minimum: 0, description: 'how many' } }, required: ['n'] });
    expect(newRow([...rows, newRow(rows)]).name).toBe('field_2');
  });
});
