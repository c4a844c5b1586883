import { mount } from '@vue/test-utils';
import { describe, expect, it } from 'vitest';
import { isMarkdownText, TABLE_LIMITS, tableOf } from '../app/result-shape';
import { createUiI18n } from '../i18n/index';
import ResultView from './ResultView.vue';

const view = (value: unknown, locale: 'en' | 'zh-CN' = 'en') => mount(ResultView, { props: { value }, global: { plugins: [createUiI18n(locale)] } });

describe('result shape', () => {
  it('takes only non-empty arrays of plain objects as tables, columns in first-seen order', () => {
    expect(tableOf([{ a: 1 }, { b: 2, a: 3 }])?.columns).toEqual(['a', 'b']);
    for (const v of [[], [1, 2], [{ a: 1 }, 2], [{ a: 1 }, [1]], [{ a: 1 }, null], { a: 1 }, 'x', [{}]]) expect(tableOf(v), JSON.stringify(v)).toBeUndefined();
  });

  it('caps rows and columns and counts the rest', () => {
    const wide = Object.fromEntries(Array.from({ length: TABLE_LIMITS.columns + 3 }, (_, i) => [`c${i}`, i]));
    const t = tableOf(Array.from({ length: TABLE_LIMITS.rows + 5 }, () => wide));
    expect(t).toMatchObject({ moreRows: 5, moreColumns: 3 });
    expect(t?.rows).toHaveLength(TABLE_LIMITS.rows);
  });

  it('knows markdown text from a plain one-liner', () => {
    expect(isMarkdownText('# Title')).toBe(true);
    expect(isMarkdownText('- one\n- two')).toBe(true);
    expect(isMarkdownText('some **bold** words')).toBe(true);
    expect(isMarkdownText('invoices-North.xlsx')).toBe(false);
    expect(isMarkdownText('2 * 3 = 6')).toBe(false);
  });
});

describe('ResultView', () => {
  it('shows rows of objects as a table with a header per key', () => {
    const w = view([{ name: 'a.xlsx', rowCount: 3 }, { name: 'b.xlsx', rowCount: 4, value: 'North' }]);
    const table = w.get('[data-testid="result-table"]');
    expect(table.findAll('th').map((th) => th.text())).toEqual(['#', 'name', 'rowCount', 'value']);
    expect(table.findAll('tbody tr')).toHaveLength(2);
    expect(table.findAll('tbody tr')[1]?.text()).toContain('North');
  });

  it('renders markdown text, never raw HTML in it', () => {
    const w = view('## Summary\n\n- **4** files\n- <img src=x onerror=alert(1)>');
    expect(w.find('h2').text()).toBe('Summary');
    expect(w.find('strong').text()).toBe('4');
    expect(w.find('img').exists()).toBe(false);
    expect(w.text()).toContain('<img src=x onerror=alert(1)>');
  });

  it('shows objects as a tree: first level open, deeper branches closed until clicked', async () => {
    const w = view({ summary: 'done', files: [{ name: 'a.xlsx', meta: { size: 1 } }], deep: { inner: { x: 1 } }, empty: {} });
    const tree = w.get('[data-testid="result-tree"]');
    expect(tree.find('[data-key="summary"]').text()).toContain('done');
    // files (an array of objects) is open at the first level and drawn as a table
    expect(w.find('[data-key="files"] [data-testid="result-table"]').exists()).toBe(true);
    const deep = w.get('[data-key="deep"]');
    expect(deep.find('[data-key="inner"]').exists()).toBe(true);
    const inner = deep.get('[data-key="inner"] > [data-testid="result-toggle-branch"]');
    expect(inner.attributes('aria-expanded')).toBe('false');
    expect(deep.find('[data-key="x"]').exists()).toBe(false);
    await inner.trigger('click');
    expect(deep.get('[data-key="x"]').text()).toContain('1');
    await w.get('[data-key="deep"] > [data-testid="result-toggle-branch"]').trigger('click');
    expect(w.find('[data-key="inner"]').exists()).toBe(false);
  });

  it('keeps scalars typed and says sizes in the UI language', () => {
    expect(view(null).text()).toBe('null');
    expect(view(42).find('.number').text()).toBe('42');
    expect(view({ a: [1, 2, 3] }).text()).toContain('3 items');
    expect(view({ a: { b: 1 } }).text()).toContain('1 field');
    expect(view({ a: { b: 1 } }).text()).not.toContain('1 fields');
    expect(view({ a: [1, 2, 3] }, 'zh-CN').text()).toContain('3 项');
  });
});
