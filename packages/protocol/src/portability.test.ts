import { describe, expect, it } from 'vitest';
import type { PlanStep } from './plan';
import { diffWorkflows, freeName, importEnvelopeProblems, secretNamesOf, stableJson, toolNamesOf } from './portability';

const obj = { type: 'object', properties: {} };
const side = (steps: unknown[], inputSchema: Record<string, unknown> = obj) => ({ plan: { steps: steps as PlanStep[] }, inputSchema });

describe('diffWorkflows', () => {
  it('compares body steps of a loop as steps, and the loop by its own fields and body ids', () => {
    const loop = (body: unknown[], extra: Record<string, unknown> = {}) => ({ id: 'each', kind: 'forEach', items: '{{node.a.result}}', steps: body, ...extra });
    const a = side([{ id: 'a', tool: 't' }, loop([{ id: 'm', tool: 'mail', arguments: { to: '{{item}}' } }])]);
    const b = side([{ id: 'a', tool: 't' }, loop([{ id: 'm', tool: 'mail', arguments: { to: '{{item.email}}' } }, { id: 'n', tool: 'x' }], { concurrency: 2 })]);
    expect(diffWorkflows(a, b).steps).toEqual({ added: ['n'], removed: [], changed: [{ id: 'each', fields: ['concurrency', 'steps'] }, { id: 'm', fields: ['arguments'] }] });
    expect(diffWorkflows(b, b).steps).toEqual({ added: [], removed: [], changed: [] });
  });

  it('ignores key order and counts a change of requiredness as a changed input', () => {
    const a = side([{ id: 'a', tool: 't', arguments: { x: 1, y: 2 } }], { type: 'object', properties: { p: { type: 'string' } } });
    const b = side([{ arguments: { y: 2, x: 1 }, tool: 't', id: 'a' }], { type: 'object', required: ['p'], properties: { p: { type: 'string' } } });
    expect(diffWorkflows(a, b)).toEqual({ steps: { added: [], removed: [], changed: [] }, inputs: { added: [], removed: [], changed: ['p'] } });
  });
});

describe('names a document lists', () => {
  it('finds secrets in arguments at any depth (body steps too), and tools', () => {
    const steps = [
      { id: 'a', tool: 'http', arguments: { headers: { auth: 'Bearer {{ secrets.API_KEY }}' }, list: ['{{secrets.B}}', 3] } },
      { id: 'l', kind: 'forEach', items: '[]', steps: [{ id: 'm', tool: 'mail', arguments: { password: '{{secrets.SMTP}}' } }] },
      { id: 'x', instruction: 'never {{secrets.IN_TEXT}} here' },
      { id: 'y', tool: 'z', arguments: { a: '{{secrets.B}}' } },
    ] as unknown as PlanStep[];
    expect(secretNamesOf(steps)).toEqual(['API_KEY', 'B', 'SMTP']);
    expect(toolNamesOf(steps)).toEqual(['http', 'mail', 'z']);
  });
});

describe('helpers', () => {
  it('suffixes taken names within the length limit', () => {
    expect(freeName('A', new Set())).toBe('A');
    expect(freeName('A', new Set(['A', 'A (2)']))).toBe('A (3)');
    const long = 'x'.repeat(200);
    expect(freeName(long, new Set([long])).length).toBe(200);
  });

  it('writes stable JSON whatever the key order', () => {
    expect(stableJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(stableJson({ a: { c: null, d: [{ y: 2, z: 1 }] }, b: 1 }));
    expect(stableJson({ a: 1 }).endsWith('}\n')).toBe(true);
  });

  it('reports an unknown format version alone', () => {
    expect(importEnvelopeProblems({ format: 'x', formatVersion: 9 }).map((p) => p.code)).toEqual(['import_format_unsupported']);
    expect(importEnvelopeProblems(null).map((p) => p.code)).toEqual(['import_not_object']);
  });
});
