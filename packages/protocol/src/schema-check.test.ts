import { describe, expect, it } from 'vitest';
import { paramText } from './i18n/index';
import { checkSchema, isCompilableSchema } from './schema-check';
import { inputSchemaProblems } from './workflow';

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

  it('keeps nothing of a schema it checked: the next one is judged as a fresh checker would judge it', () => {
    // a schema that registers a name, then one that refers to it: on its own the reference does not resolve
    expect(isCompilableSchema({ $id: 'https://example.com/named', type: 'object', definitions: { x: { $id: 'https://example.com/inner', type: 'string' } } })).toBe(true);
    expect(isCompilableSchema({ type: 'object', properties: { a: { $ref: 'https://example.com/inner' } } })).toBe(false);
    expect(isCompilableSchema({ type: 'object', properties: { a: { $ref: 'https://example.com/named' } } })).toBe(false);
    // a failure leaves nothing behind: the same shape, valid, then compiles
    expect(isCompilableSchema({ type: 'object', properties: { b: { type: 'nope' } } })).toBe(false);
    expect(isCompilableSchema({ type: 'object', properties: { b: { type: 'string' } } })).toBe(true);
    // many schemas one after another, each with its local reference, all judged alike
    for (let i = 0; i < 50; i++) expect(isCompilableSchema({ type: 'object', definitions: { d: { type: 'integer', minimum: i } }, properties: { v: { $ref: '#/definitions/d' } } })).toBe(true);
  });
});

describe('schema issues for people', () => {
  const schema = {
    type: 'object',
    required: ['filePath', 'name'],
    additionalProperties: false,
    properties: {
      filePath: { type: 'string', minLength: 1 },
      name: { type: 'string', title: 'File name', minLength: 1 },
      rows: { type: 'integer', title: 'Rows', minimum: 1 },
      filters: { type: 'array', items: { type: 'object', properties: { op: { enum: ['eq', 'ne', 'gt'] } } } },
    },
  };
  const labels = (n: string) => (n === 'filePath' ? { $texts: { en: 'Workbook', 'zh-CN': '工作簿' } } : undefined);
  const say = (value: unknown, locale: 'en' | 'zh-CN') => checkSchema(schema, value, labels).map((i) => paramText(i.text, locale));

  it('names the field by its label or title and says what is wrong, in en and zh-CN', () => {
    expect(say({ name: '' }, 'en').sort()).toEqual(['File name must not be empty.', 'Workbook is required.']);
    expect(say({ name: '' }, 'zh-CN').sort()).toEqual(['“File name”不能为空。', '“工作簿”为必填项。'].sort());
    expect(say({ filePath: 'a', name: 'b', rows: 0, filters: [{ op: 'like' }], extra: 1 }, 'en').sort()).toEqual([
      'Rows must be at least 1.',
      'extra is not a field this accepts; remove it.',
      'op (item 1) must be one of: eq, ne, gt.',
    ]);
    expect(say({ filePath: 'a', name: 'b', rows: 'x' }, 'zh-CN')).toEqual(['“Rows”必须是整数。']);
  });

  it('keeps the English sentence and the structured field for other readers', () => {
    const [issue] = checkSchema(schema, { filePath: 'a' });
    expect(issue).toMatchObject({ path: '.name', name: 'name', title: 'File name', keyword: 'required', message: 'File name is required.' });
    // a rule without its own sentence still reads as one, never as Ajv's raw text alone
    const [mult] = checkSchema({ type: 'number', multipleOf: 2 }, 3);
    expect(mult?.message).toBe('The value is invalid (must be multiple of 2).');
  });
});

describe('patterns run in linear time (RE2)', () => {
  // `^(a+)+$` against 40 a's and a "!" backtracks 2^40 times on V8's engine (hours); RE2 answers at once
  const evil = `${'a'.repeat(40)}!`;

  it('checks a catastrophic pattern without backtracking, and still checks it', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    expect(checkSchema(schema, { s: evil }).map((i) => i.keyword)).toEqual(['pattern']);
    expect(checkSchema(schema, { s: 'aaaa' })).toEqual([]);
    const keys = { type: 'object', patternProperties: { '^(x+x+)+y$': { type: 'number' } } };
    expect(checkSchema(keys, { [`${'x'.repeat(40)}y`]: 'no' }).map((i) => i.keyword)).toEqual(['type']);
    expect(checkSchema(keys, { [`${'x'.repeat(40)}`]: 'free' })).toEqual([]);
  });

  it('refuses a pattern RE2 cannot run (backreference, lookaround) when an input schema is saved', () => {
    for (const pattern of ['^(a)\\1$', '^(?=a)a$', '(?<!x)y']) {
      const schema = { type: 'object', properties: { s: { type: 'string', pattern } } };
      expect(isCompilableSchema(schema)).toBe(false);
      expect(inputSchemaProblems(schema)).toEqual([{ code: 'input_pattern_unsafe', field: 'inputSchema', params: { pattern } }]);
    }
    expect(inputSchemaProblems({ type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]{2,8}\\d*$' } } })).toEqual([]);
  });
});
