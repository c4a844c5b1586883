import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inferType } from './cells';
import { checkFilter, type Filter, fileNameFor, passes } from './config';

const date = new Date(Date.UTC(2026, 2, 15));

describe('filters', () => {
  it.each([
    [{ column: 'x', op: 'eq', value: 'North' }, 'North', true],
    [{ column: 'x', op: 'eq', value: 'North' }, ' North ', true],
    [{ column: 'x', op: 'ne', value: 'North' }, 'South', true],
    [{ column: 'x', op: 'contains', value: 'ort' }, 'NORTH', true],
    [{ column: 'x', op: 'gt', value: 100 }, 100.5, true],
    [{ column: 'x', op: 'gt', value: 100 }, '250', true],
    [{ column: 'x', op: 'lte', value: 100 }, 100, true],
    [{ column: 'x', op: 'gt', value: 100 }, null, false],
    [{ column: 'x', op: 'gte', value: '2026-03-01' }, date, true],
    [{ column: 'x', op: 'lt', value: '2026-03-01' }, date, false],
    [{ column: 'x', op: 'in', value: ['a', 'b'] }, 'b', true],
    [{ column: 'x', op: 'notIn', value: ['a', 'b'] }, 'c', true],
    [{ column: 'x', op: 'empty' }, '', true],
    [{ column: 'x', op: 'notEmpty' }, null, false],
    [{ column: 'x', op: 'eq', value: 5 }, { formula: 'A1*5', result: 5 }, true],
  ] as Array<[Filter, unknown, boolean]>)('%j on %j → %s', (f, cell, expected) => {
    expect(passes(f, cell as never)).toBe(expected);
  });

  it('ne is the negation of eq, notIn of in (property)', () => {
    const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -50, max: 50 }));
    fc.assert(
      fc.property(scalar, scalar, fc.array(scalar, { maxLength: 4 }), (cell, value, list) => {
        expect(passes({ column: 'x', op: 'ne', value }, cell)).toBe(!passes({ column: 'x', op: 'eq', value }, cell));
        expect(passes({ column: 'x', op: 'notIn', value: list }, cell)).toBe(!passes({ column: 'x', op: 'in', value: list }, cell));
      }),
    );
  });

  it('refuses filters of the wrong shape', () => {
    expect(() => checkFilter({ column: 'x', op: 'in', value: 'a' }, 0)).toThrow(/needs a list/);
    expect(() => checkFilter({ column: 'x', op: 'eq' }, 1)).toThrow(/#2/);
    expect(() => checkFilter({ column: 'x', op: 'empty' }, 0)).not.toThrow();
  });
});

describe('cells and names', () => {
  it('infers one type per column', () => {
    expect(inferType({ integer: 3, number: 2 })).toBe('number');
    expect(inferType({ text: 1, integer: 1 })).toBe('mixed');
    expect(inferType({ empty: 4 })).toBe('empty');
    expect(inferType({ date: 2, empty: 1 })).toBe('date');
  });

  it('fills file-name patterns', () => {
    expect(fileNameFor('{base}-{value}', 'invoices', 'North')).toBe('invoices-North');
    expect(fileNameFor('{value}/{value}', 'b', 'x')).toBe('x/x');
  });
});
