import { describe, expect, it } from 'vitest';
import { checkExpression, convertValue, detectSource, referencedNode, sourceOf } from './input-source';

describe('input sources', () => {
  it.each([
    ['plain text', 'manual'],
    [42, 'manual'],
    [{ a: 1 }, 'manual'],
    ['{{node.split.result.files[0].name}}', 'reference'],
    ['{{inputs.column}}', 'reference'],
    ['@file:workbook', 'reference'],
    ['Hello {{inputs.name}}, see {{node.a.result.url}}', 'expression'],
    ['{{broken', 'expression'],
  ] as const)('detects %j as %s', (value, expected) => {
    expect(detectSource(value)).toBe(expected);
  });

  it('a remembered choice wins over detection', () => {
    expect(sourceOf('', 'expression')).toBe('expression');
  });

  it('converts values when switching source', () => {
    expect(convertValue(5, 'manual', 'expression')).toBe('5');
    expect(convertValue({ a: 1 }, 'manual', 'expression')).toBe('{"a":1}');
    expect(convertValue(' {{inputs.x}} ', 'expression', 'reference')).toBe('{{inputs.x}}');
    expect(convertValue('Hi {{inputs.x}}', 'expression', 'reference')).toBe('');
    expect(convertValue('{{inputs.x}}', 'reference', 'manual')).toBeUndefined();
  });

  it('flags unknown references in expressions', () => {
    const tokens = checkExpression('A {{node.a.result.x}} B {{node.zz.result}} {{inputs.nope}} {{what}}', new Set(['a']), new Set(['x']));
    expect(tokens.map((t) => t.problem ?? 'ok')).toEqual(['ok', 'unknown_node', 'unknown_input', 'malformed']);
  });

  it('finds the node a reference points at', () => {
    expect(referencedNode('{{node.split.result.files}}')).toBe('split');
    expect(referencedNode('{{inputs.a}}')).toBeUndefined();
    expect(referencedNode('x {{node.split.result}}')).toBeUndefined();
  });
});
