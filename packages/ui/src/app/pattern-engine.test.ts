import { checkInputs, inputSchemaProblems, type JsonSchema, linearEngineReady } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { ensurePatternEngine, patternEngineReady } from './pattern-engine';

/**
 * The web UI starts without RE2 (the build resolves protocol's engine module to none, as this
 * test project does) and loads it on first need; a schema with a pattern checked before it is
 * there is "not checked yet", and nothing of that is kept: afterwards the checks answer as the
 * host's, with the same codes.
 */

const form: JsonSchema = { type: 'object', properties: { code: { type: 'string', pattern: '^[a-z]+$' } } };
const backreference: JsonSchema = { type: 'object', properties: { word: { type: 'string', pattern: '^(a)\\1$' } } };

describe('the schema patterns engine in the web UI', () => {
  it('is not loaded with the first screen; checks made before it are not cached; loaded, they are the host\'s', async () => {
    expect(linearEngineReady()).toBe(false);
    expect(patternEngineReady.value).toBe(false);
    // not checked yet: neither refused nor remembered as passing
    expect(checkInputs(form, { code: 'ABC' }).ok).toBe(true);
    expect(inputSchemaProblems(backreference).map((p) => p.code)).not.toContain('input_pattern_unsafe');

    await Promise.all([ensurePatternEngine(), ensurePatternEngine()]);
    expect(patternEngineReady.value).toBe(true);
    expect(linearEngineReady()).toBe(true);
    const checked = checkInputs(form, { code: 'ABC' });
    expect(checked.ok).toBe(false);
    expect(checked.ok ? [] : checked.problems.map((p) => p.field)).toEqual(['code']);
    expect(checkInputs(form, { code: 'abc' }).ok).toBe(true);
    expect(inputSchemaProblems(backreference)).toContainEqual({ code: 'input_pattern_unsafe', field: 'inputSchema', params: { pattern: '^(a)\\1$' } });
  });
});
