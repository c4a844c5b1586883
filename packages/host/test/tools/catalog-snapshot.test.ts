import { describe, expect, it } from 'vitest';
import { ToolCatalog } from '../../src/tools/catalog';
import type { Tool, ToolSource } from '../../src/tools/tool';

/**
 * A catalog snapshot is a function of the tools the sources list: while they list the very same
 * tools in the same order (and each tool whose availability chose between two of one name is as
 * available as then), the last snapshot is handed out again; any other change makes a new one.
 */

const tool = (name: string, id: string, available: boolean | (() => boolean) = true): Tool =>
  ({
    name,
    id,
    description: name,
    inputSchema: { type: 'object' },
    effect: 'read',
    source: 'builtin',
    schemaRevision: '1',
    idempotent: true,
    get available() {
      return typeof available === 'function' ? available() : available;
    },
    invoke: async () => null,
  }) as Tool;

/** A source whose list the test changes; it hands out a copy of its array each time, as the real ones do. */
const source = (tools: Tool[], kind: ToolSource['kind'] = 'builtin') => {
  const s = { kind, tools, list: async () => [...s.tools] };
  return s;
};

describe('catalog snapshots', () => {
  it('are handed out again while the sources list the same tools', async () => {
    const a = tool('a', 'builtin:a');
    const b = tool('b', 'builtin:b');
    const catalog = new ToolCatalog();
    const s1 = source([a]);
    const s2 = source([b], 'plugin');
    catalog.register(s1);
    catalog.register(s2);
    const first = await catalog.snapshot('default');
    expect(first.tools).toEqual([a, b]);
    expect(await catalog.snapshot('default')).toBe(first);
    expect(await catalog.snapshot('someone-else')).toBe(first);
    // another tool object (even of the same name), another order, one tool more or less: a new snapshot
    const a2 = tool('a', 'builtin:a');
    s1.tools = [a2];
    const second = await catalog.snapshot('default');
    expect(second).not.toBe(first);
    expect(second.get('a')).toBe(a2);
    s1.tools = [a2, tool('c', 'builtin:c')];
    const third = await catalog.snapshot('default');
    expect(third.tools.map((t) => t.name)).toEqual(['a', 'c', 'b']);
    s1.tools = [a2];
    expect((await catalog.snapshot('default')).get('c')).toBeUndefined();
  });

  it('choose again between two tools of one name when the availability that chose has changed', async () => {
    let firstAvailable = false;
    const disabled = tool('dup', 'p1:dup', () => firstAvailable);
    const enabled = tool('dup', 'p2:dup', true);
    const catalog = new ToolCatalog();
    catalog.register(source([disabled, enabled], 'plugin'));
    const before = await catalog.snapshot('default');
    expect(before.get('dup')).toBe(enabled);
    expect(await catalog.snapshot('default')).toBe(before);
    // the first tool becomes available: it wins again (first source first), as a fresh build decides
    firstAvailable = true;
    const after = await catalog.snapshot('default');
    expect(after).not.toBe(before);
    expect(after.get('dup')).toBe(disabled);
    expect(after.tools).toEqual([disabled]);
  });

  it('made from the same answers at once are handed out again; another answer, or a changed availability, makes a new one', async () => {
    const a = tool('a', 'builtin:a');
    const b = tool('b', 'plugin:b');
    let bAvailable = true;
    const b2 = tool('b', 'plugin2:b', () => bAvailable);
    let aNow: readonly Tool[] = [a];
    let bNow: readonly Tool[] | undefined = [b, b2];
    const catalog = new ToolCatalog();
    catalog.register({ kind: 'builtin', list: async () => [...aNow], listNow: () => aNow });
    catalog.register({ kind: 'plugin', list: async () => [b, b2], listNow: () => bNow });
    // an empty answer is a new array each time, as MCP's and the workflows' are
    catalog.register({ kind: 'mcp', list: async () => [], listNow: () => [] });
    const first = await catalog.snapshot('default');
    expect(first.tools).toEqual([a, b]);
    expect(await catalog.snapshot('default')).toBe(first);
    // another array of the same tools: the same snapshot
    aNow = [a];
    expect(await catalog.snapshot('default')).toBe(first);
    // another tool: a new snapshot, then handed out again
    const c = tool('c', 'builtin:c');
    aNow = [a, c];
    const second = await catalog.snapshot('default');
    expect(second.tools).toEqual([a, c, b]);
    expect(await catalog.snapshot('default')).toBe(second);
    // the tool that lost the choice between two of one name is still read: its availability cannot change the choice while the first is available
    bAvailable = false;
    expect(await catalog.snapshot('default')).toBe(second);
    // a source that must be awaited once, then answers at once again
    bNow = undefined;
    expect(await catalog.snapshot('default')).toBe(second);
    bNow = [b2];
    const third = await catalog.snapshot('default');
    expect(third.get('b')).toBe(b2);
    aNow = [];
    const fourth = await catalog.snapshot('default');
    expect(fourth.tools).toEqual([b2]);
    expect(fourth.get('a')).toBeUndefined();
  });

  it('made from the same answers at once choose again when the availability that chose has changed', async () => {
    let firstAvailable = false;
    const disabled = tool('dup', 'p1:dup', () => firstAvailable);
    const enabled = tool('dup', 'p2:dup', true);
    const answer: readonly Tool[] = [disabled, enabled];
    const catalog = new ToolCatalog();
    catalog.register({ kind: 'plugin', list: async () => [...answer], listNow: () => answer });
    const before = await catalog.snapshot('default');
    expect(before.get('dup')).toBe(enabled);
    expect(await catalog.snapshot('default')).toBe(before);
    firstAvailable = true;
    const after = await catalog.snapshot('default');
    expect(after).not.toBe(before);
    expect(after.get('dup')).toBe(disabled);
    expect(await catalog.snapshot('default')).toBe(after);
    firstAvailable = false;
    expect((await catalog.snapshot('default')).get('dup')).toBe(enabled);
  });

  it('leave out a skipped kind of source, and a failing source, every time', async () => {
    const a = tool('a', 'builtin:a');
    const w = tool('w', 'workflow:w');
    const catalog = new ToolCatalog();
    catalog.register(source([a]));
    catalog.register(source([w], 'workflow'));
    catalog.register({ kind: 'mcp', list: async () => Promise.reject(new Error('server gone')) });
    const all = await catalog.snapshot('default');
    expect(all.tools).toEqual([a, w]);
    const skipped = await catalog.snapshot('default', 'workflow');
    expect(skipped.tools).toEqual([a]);
    expect(await catalog.snapshot('default', 'workflow')).not.toBe(skipped);
    expect(await catalog.snapshot('default')).toBe(all);
  });
});
