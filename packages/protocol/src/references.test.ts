import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectReferences, exactReference, parseReference, resolveString, resolveValue, scanString, UnresolvedReferenceError } from './references';

const scope = {
  stepIds: ['split', 'mail'],
  results: new Map<string, unknown>([
    ['split', { files: [{ name: 'east.xlsx', rows: 3 }, { name: 'west.xlsx', rows: 4 }], count: 2, ok: true }],
    ['mail', { confirmation: { confirmationId: 'c-1' } }],
  ]),
  dependsOn: ['split', 'mail'],
  inputs: { region: 'East', limit: 5, flags: ['a'] },
  file: (name: string) => `/granted/${name}.xlsx`,
};

describe('reference grammar', () => {
  it('parses every form with paths and indexes', () => {
    expect(parseReference('steps.1.result.files[0].name')).toMatchObject({ ok: true, ref: { kind: 'steps', index: 1, path: ['files', 0, 'name'] } });
    expect(parseReference('node.split.result')).toMatchObject({ ok: true, ref: { kind: 'node', id: 'split', path: [] } });
    expect(parseReference(' last.result.count ')).toMatchObject({ ok: true, ref: { kind: 'last', path: ['count'] } });
    expect(parseReference('inputs.region')).toMatchObject({ ok: true, ref: { kind: 'inputs', name: 'region', path: [] } });
    for (const bad of ['steps.x.result', 'node..result', 'inputs.', 'constructor', 'node.a.result[x]', 'process.env.HOME', 'node.a.result.__proto__()']) {
      expect(parseReference(bad).ok, bad).toBe(false);
    }
  });

  it('flags an unclosed placeholder', () => {
    expect(scanString('{{node.a.result').some((t) => !t.ok)).toBe(true);
  });

  it('keeps the JSON type of exact placeholders and renders embedded ones as text', () => {
    expect(resolveString('{{node.split.result.count}}', scope)).toBe(2);
    expect(resolveString('{{node.split.result.ok}}', scope)).toBe(true);
    expect(resolveString('{{node.split.result.files}}', scope)).toEqual([{ name: 'east.xlsx', rows: 3 }, { name: 'west.xlsx', rows: 4 }]);
    expect(resolveString('{{inputs.limit}}', scope)).toBe(5);
    expect(resolveString('Region {{inputs.region}} has {{steps.1.result.count}} parts: {{inputs.flags}}', scope)).toBe('Region East has 2 parts: ["a"]');
    expect(resolveString('{{node.split.result.files[1].name}}', scope)).toBe('west.xlsx');
    expect(resolveString('{{last.result.confirmation.confirmationId}}', scope)).toBe('c-1');
    expect(resolveString('@file:book', scope)).toBe('/granted/book.xlsx');
  });

  it('fails clearly on references that resolve to nothing', () => {
    expect(() => resolveString('{{node.split.result.files[5].name}}', scope)).toThrow(UnresolvedReferenceError);
    expect(() => resolveString('{{inputs.nope}}', scope)).toThrow(/inputs.nope/);
    expect(() => resolveString('{{node.split.result.constructor}}', scope)).toThrow(UnresolvedReferenceError);
  });

  it('resolves nested argument objects', () => {
    expect(resolveValue({ a: ['{{inputs.limit}}', { b: 'x {{inputs.region}}' }], n: 3 }, scope)).toEqual({ a: [5, { b: 'x East' }], n: 3 });
  });

  it('finds placeholders with their locations', () => {
    const found = collectReferences({ a: { b: ['{{inputs.region}}'] }, c: 'x {{node.split.result}} y' });
    expect(found.map((f) => [f.at, f.exact])).toEqual([[['a', 'b', 0], true], [['c'], false]]);
  });

  it('never evaluates: arbitrary text without braces is returned unchanged (property)', () => {
    fc.assert(fc.property(fc.string().filter((s) => !s.includes('{{') && !s.startsWith('@file:')), (s) => resolveString(s, scope) === s));
  });

  it('an exact placeholder round-trips any JSON value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const s = { ...scope, inputs: { v } };
        if (v === undefined) return true;
        return JSON.stringify(resolveString('{{inputs.v}}', s)) === JSON.stringify(v);
      }),
    );
    expect(exactReference('{{inputs.v}} ')).toBeUndefined();
  });
});

import { validatePlan } from './validate';

describe('FileRef objects in arguments', () => {
  it('are not type-checked as literals (they become paths at dispatch)', () => {
    const tool = { name: 'read', inputSchema: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] }, effect: 'read' as const, idempotent: false, source: 'plugin' as const, available: true };
    const ctx = { tool: () => tool, inputNames: new Set<string>() };
    expect(validatePlan({ steps: [{ id: 'a', tool: 'read', arguments: { filePath: { fileRef: 'f1' } } }] }, ctx).ok).toBe(true);
    expect(validatePlan({ steps: [{ id: 'a', tool: 'read', arguments: { filePath: { id: 'f1', name: 'x.xlsx', size: 3, sha256: 'a'.repeat(64) } } }] }, ctx).ok).toBe(true);
    expect(validatePlan({ steps: [{ id: 'a', tool: 'read', arguments: { filePath: { other: 1 } } }] }, ctx).ok).toBe(false);
  });
});
