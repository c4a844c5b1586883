import { describe, expect, it } from 'vitest';
import { isCompilableSchema } from './schema-check';

describe('isCompilableSchema', () => {
  it('answers from the schema text: a remembered verdict never leaks to a different schema', () => {
    const good = { type: 'object', properties: { n: { type: 'number' } } };
    expect(isCompilableSchema(good)).toBe(true);
    expect(isCompilableSchema(good)).toBe(true);
    // the same object changed in place is judged anew
    (good.properties.n as { type: unknown }).type = 12;
    expect(isCompilableSchema(good)).toBe(false);
    (good.properties.n as { type: unknown }).type = 'number';
    expect(isCompilableSchema(good)).toBe(true);
    // two schemas with the same $id are judged each on its own (no checker keeps either)
    expect(isCompilableSchema({ $id: 'https://example.com/s', type: 'string' })).toBe(true);
    expect(isCompilableSchema({ $id: 'https://example.com/s', type: 'number' })).toBe(true);
    expect(isCompilableSchema({ $id: 'https://example.com/s', type: 'nope' })).toBe(false);
    expect(isCompilableSchema([])).toBe(false);
  });
});
