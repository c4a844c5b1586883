import type { CatalogEntry } from '@fengyu/protocol';
import { mount } from '@vue/test-utils';
import { describe, expect, it } from 'vitest';
import { createUiI18n } from '../../i18n/index';
import NodeInfo from './NodeInfo.vue';

const split: CatalogEntry = {
  name: 'excel_split',
  description: 'Split a workbook by a column',
  inputSchema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'fengyu-file', description: 'the workbook' }, column: { type: 'string' } } },
  outputSchema: { type: 'object', properties: { files: { type: 'array', description: 'one file per value' } } },
  effect: 'write',
  source: 'plugin',
  id: 'fan.summer.excel:excel_split',
  schemaRevision: '1',
  idempotent: false,
  available: true,
  origin: 'fan.summer.excel',
};

describe('node Info', () => {
  it("shows the tool's description, contract, effect and source", () => {
    const w = mount(NodeInfo, { props: { entry: split }, global: { plugins: [createUiI18n('en')] } });
    const text = w.text();
    expect(text).toContain('Split a workbook by a column');
    expect(text).toContain('file');
    expect(text).toContain('the workbook');
    expect(text).toContain('one file per value');
    expect(w.get('[data-testid="node-info-effect"]').text()).toBe('writes or changes data');
    expect(text).toContain('Plugin · fan.summer.excel');
    expect(w.find('.req').exists()).toBe(true);
  });

  it('speaks Chinese in zh-CN', () => {
    const w = mount(NodeInfo, { props: { entry: split }, global: { plugins: [createUiI18n('zh-CN')] } });
    expect(w.text()).toContain('插件 · fan.summer.excel');
    expect(w.get('[data-testid="node-info-effect"]').text()).toBe('写入或修改数据');
  });
});
