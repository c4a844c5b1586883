import { type CatalogEntry, emptyGraph } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { COLORS, localizedEntry, nodeColor, paletteItems, reconcileArguments, syncWithCatalog } from './catalog-nodes';
import { decoratedInputSchema } from './flow-node';

const entry = (over: Partial<CatalogEntry>): CatalogEntry => ({
  name: 't',
  description: '',
  inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
  effect: 'read',
  source: 'plugin',
  id: 'p:t',
  schemaRevision: 'r1',
  idempotent: false,
  available: true,
  origin: 'p',
  ...over,
});

describe('catalog nodes', () => {
  it('declared nodes first; the rest only behind "show all tools"', () => {
    const cat = [entry({ name: 'plain', id: 'p:plain' }), entry({ name: 'decl', id: 'p:decl', flowNode: { label: 'Declared' } }), entry({ name: 'gone', id: 'p:gone', available: false })];
    expect(paletteItems(cat, false).map((i) => i.label)).toEqual(['Declared']);
    expect(paletteItems(cat, true).map((i) => i.label)).toEqual(['Declared', 'plain']);
  });

  it('lists a tool unavailable for a known reason, greyed with the reason; one gone for no reason is left out', () => {
    const cat = [entry({ name: 'web_search', id: 'builtin:web_search', source: 'builtin', available: false, unavailableReason: 'web_search_unconfigured', flowNode: { label: 'Web search' } }), entry({ name: 'gone', id: 'p:gone', available: false, flowNode: { label: 'Gone' } })];
    const items = paletteItems(cat, true);
    expect(items.map((i) => [i.label, i.unavailable])).toEqual([['Web search', 'web_search_unconfigured']]);
  });

  it('offers the browser built-ins in the web group, labelled, without "show all tools"', () => {
    const browser = (name: string, label: string, available = true) => entry({ name, id: `builtin:${name}`, source: 'builtin', origin: undefined, available, flowNode: { label, help: 'h' } });
    const cat = [browser('browser_navigate', 'Open web page'), browser('browser_extract_table', 'Read table'), browser('browser_click', 'Click element', false)];
    const items = paletteItems(cat, false);
    expect(items.map((i) => [i.label, i.group, i.icon])).toEqual([
      ['Open web page', 'web', 'web'],
      ['Read table', 'web', 'web'],
    ]);
  });

  it('keeps a node whose tool disappeared, marked unavailable and gray', () => {
    const g = emptyGraph();
    g.nodes.push({ id: 'n', type: 'tool', tool: { name: 't', id: 'p:t', schemaRevision: 'r1' }, position: { x: 0, y: 0 }, data: { arguments: { a: 'x' } } });
    const sync = syncWithCatalog(g, []);
    expect(sync.unavailable).toEqual(['n']);
    expect(g.nodes).toHaveLength(2);
    expect(g.nodes[1]).toMatchObject({ data: { arguments: { a: 'x' } } });
    expect(nodeColor(g.nodes[1] as never, undefined)).toBe(COLORS.unavailable);
  });

  it('reconciles a returning tool to its latest schema', () => {
    const g = emptyGraph();
    g.nodes.push({ id: 'n', type: 'tool', tool: { name: 't', id: 'p:t', schemaRevision: 'r1' }, position: { x: 0, y: 0 }, data: { arguments: { a: 'x', old: 1 } } });
    const next = entry({ schemaRevision: 'r2', inputSchema: { type: 'object', properties: { a: { type: 'string' }, mode: { type: 'string', default: 'fast' } } } });
    const sync = syncWithCatalog(g, [next]);
    expect(sync.reconciled).toEqual([{ nodeId: 'n', arguments: { a: 'x', mode: 'fast' }, dropped: ['old'], added: ['mode'] }]);
    expect(g.nodes[1]).toMatchObject({ tool: { schemaRevision: 'r2' }, data: { arguments: { a: 'x', mode: 'fast' } } });
  });

  it('leaves arguments alone when the schema allows anything', () => {
    expect(reconcileArguments({ z: 1 }, { type: 'object' }).arguments).toEqual({ z: 1 });
  });
});

describe('localized catalog entries', () => {
  const analyze = {
    name: 'excel_analyze',
    description: 'Analyze the workbook',
    inputSchema: { type: 'object', properties: { filePath: { type: 'string' }, headerRow: { type: 'number' } } },
    effect: 'read',
    source: 'plugin',
    id: 'fan.summer.excel:excel_analyze',
    schemaRevision: '1',
    idempotent: true,
    available: true,
    flowNode: {
      tool: 'excel_analyze',
      label: 'Analyze workbook',
      category: 'Excel',
      help: 'Reads every sheet',
      inputs: { filePath: { type: 'file', label: 'Workbook', help: 'An .xlsx file' }, headerRow: { type: 'number', label: 'Header row' } },
      i18n: { 'zh-CN': { label: '分析工作簿', description: '分析工作簿', category: '表格', inputs: { filePath: { label: '工作簿' }, ghost: { label: '幽灵' } } } },
    },
  } as unknown as CatalogEntry;

  it('lays the locale texts over the declaration, keeping what the locale leaves out', () => {
    const zh = localizedEntry(analyze, 'zh-CN');
    expect(zh.flowNode).toMatchObject({ label: '分析工作簿', category: '表格', help: 'Reads every sheet', inputs: { filePath: { type: 'file', label: '工作簿', help: 'An .xlsx file' }, headerRow: { label: 'Header row' } } });
    expect(Object.keys((zh.flowNode?.inputs ?? {}) as object)).toEqual(['filePath', 'headerRow']);
    expect(zh.description).toBe('分析工作簿');
    expect(localizedEntry(analyze, 'en')).toBe(analyze);
    expect(localizedEntry(undefined, 'zh-CN')).toBeUndefined();
    const [item] = paletteItems([analyze], false, 'zh-CN');
    expect(item).toMatchObject({ label: '分析工作簿', group: '表格' });
    expect(decoratedInputSchema(zh).properties).toMatchObject({ filePath: { title: '工作簿' } });
  });
});
