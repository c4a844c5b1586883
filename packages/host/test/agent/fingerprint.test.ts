import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/agent/run-text';

/**
 * A step's fingerprint is stored with its execution and compared on resume and rewind: its value
 * for a given step never changes between versions (the SHA-256 hex of [tool, arguments, instruction]).
 */
describe('a step fingerprint', () => {
  it('is the SHA-256 hex of [tool, arguments, instruction], the value stored by earlier versions', () => {
    expect(fingerprint({ id: 'a', tool: 'echo', arguments: { value: 1 } })).toBe('8fe83095da88be4997532b03ca2463bf297ca229163edf8ce01b94c59e758f3c');
    const model = { id: 'm', instruction: 'summarize {{node.a.result}}' };
    expect(fingerprint(model)).toBe(createHash('sha256').update(JSON.stringify([null, null, model.instruction])).digest('hex'));
  });

  it('differs when the arguments differ, and not with the step id or title', () => {
    const a = fingerprint({ id: 'a', tool: 'echo', arguments: { value: 1 } });
    expect(fingerprint({ id: 'a', tool: 'echo', arguments: { value: 2 } })).not.toBe(a);
    expect(fingerprint({ id: 'b', title: 'other', tool: 'echo', arguments: { value: 1 } })).toBe(a);
  });
});
