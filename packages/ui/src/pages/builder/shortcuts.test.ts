import { describe, expect, it } from 'vitest';
import { deletionOf } from './shortcuts';

describe('deletionOf (the Delete key)', () => {
  it('deletes a selected edge alone, never the node added just before it', () => {
    expect(deletionOf([], ['e1'], 'model')).toEqual({ nodes: [], edges: ['e1'] });
  });
  it('deletes the current node when nothing else is selected, once', () => {
    expect(deletionOf([], [], 'model')).toEqual({ nodes: ['model'], edges: [] });
    expect(deletionOf(['model'], [], 'model')).toEqual({ nodes: ['model'], edges: [] });
  });
  it('deletes canvas-selected nodes and edges together', () => {
    expect(deletionOf(['a', 'b'], ['e1'], undefined)).toEqual({ nodes: ['a', 'b'], edges: ['e1'] });
  });
});
