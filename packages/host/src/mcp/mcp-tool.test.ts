import { isFengYuError } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { effectOf, mapCallResult, qualifiedName, TOOL_NAME, toolFacts } from './mcp-tool';

describe('MCP tool facts', () => {
  it.each([
    [{ readOnlyHint: true }, 'read'],
    [{ readOnlyHint: true, openWorldHint: true }, 'read'],
    [{ openWorldHint: true }, 'external'],
    [{ readOnlyHint: false, openWorldHint: true, destructiveHint: true }, 'external'],
    [{ destructiveHint: false }, 'write'],
    [{ openWorldHint: false }, 'write'],
    [undefined, 'write'],
  ] as const)('annotations %j → effect %s', (annotations, effect) => {
    expect(effectOf(annotations)).toBe(effect);
  });

  it('names, ids, idempotence and revisions', () => {
    const f = toolFacts('gh', { name: 'list_issues', description: 'd', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, annotations: { idempotentHint: true } });
    expect(f).toMatchObject({ name: 'gh__list_issues', id: 'mcp:gh:list_issues', idempotent: true, effect: 'write', description: 'd' });
    const g = toolFacts('gh', { name: 'list_issues', inputSchema: { type: 'object', properties: { q: { type: 'number' } } } });
    expect(g.schemaRevision).not.toBe(f.schemaRevision);
    expect(g.idempotent).toBe(false);
    expect(toolFacts('gh', { name: 'list_issues', description: 'other', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }).schemaRevision).toBe(f.schemaRevision);
    expect(qualifiedName('a-b', 'c.d')).toBe('a-b__c.d');
  });

  it.each(['ok_name', 'a.b-c', 'x'.repeat(128)])('accepts tool name %s', (n) => expect(TOOL_NAME.test(n)).toBe(true));
  it.each(['', 'has space', 'semi;colon', 'x'.repeat(129), 'slash/name', '{{x}}'])('refuses tool name %j', (n) => expect(TOOL_NAME.test(n)).toBe(false));
});

describe('mapCallResult', () => {
  const text = (t: string) => ({ type: 'text', text: t });
  it('prefers structuredContent', () => {
    expect(mapCallResult('s__t', { content: [text('ignored')], structuredContent: { a: 1 } })).toEqual({ a: 1 });
  });
  it('joins text blocks and parses JSON when it parses', () => {
    expect(mapCallResult('s__t', { content: [text('one'), text('two')] })).toBe('one\ntwo');
    expect(mapCallResult('s__t', { content: [text('{"x":[1,2]}')] })).toEqual({ x: [1, 2] });
    expect(mapCallResult('s__t', { content: [text('42')] })).toBe(42);
    expect(mapCallResult('s__t', { content: [text('{not json')] })).toBe('{not json');
    expect(mapCallResult('s__t', { content: [{ type: 'resource', resource: { uri: 'file:///a', text: 'embedded' } }] })).toBe('embedded');
  });
  it('describes binary blocks instead of copying them', () => {
    const r = mapCallResult('s__t', { content: [{ type: 'image', data: 'A'.repeat(400), mimeType: 'image/png' }] });
    expect(r).toEqual({ content: [{ type: 'image', mimeType: 'image/png', bytes: 300 }] });
  });
  it('maps an empty result to null and the legacy toolResult shape', () => {
    expect(mapCallResult('s__t', { content: [] })).toBeNull();
    expect(mapCallResult('s__t', { toolResult: { legacy: true } })).toEqual({ legacy: true });
  });
  it('rejects isError with tool_failed and the text', () => {
    try {
      mapCallResult('s__t', { isError: true, content: [text('nope')] });
      expect.unreachable();
    } catch (e) {
      expect(isFengYuError(e) && e.code).toBe('tool_failed');
      expect((e as { params: Record<string, unknown> }).params).toEqual({ name: 's__t', reason: 'nope' });
    }
  });
});
