import { LOCALES } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemplateStore, TEMPLATES_DIR } from '../../src/workflows/templates';
import { startTestHost, type TestHost } from '../support/host';

/**
 * The built-in templates speak every UI language: name, description, goal, every input's title
 * and description, every step's title; a flow created in zh-CN starts with the Chinese words.
 */

const store = new TemplateStore();
store.loadDir(TEMPLATES_DIR);
const others = LOCALES.filter((l) => l !== 'en');

describe('built-in templates carry every UI language', () => {
  for (const tpl of store.list()) {
    it(tpl.id, () => {
      const raw = tpl as typeof tpl & { i18n?: Record<string, { name?: string; description?: string; goal?: string; inputs?: Record<string, { title?: string; description?: string }>; steps?: Record<string, { title?: string }> }> };
      for (const locale of others) {
        const texts = raw.i18n?.[locale];
        expect(texts?.name, `${locale} name`).toBeTruthy();
        expect(texts?.description, `${locale} description`).toBeTruthy();
        if (tpl.plan.goal) expect(texts?.goal, `${locale} goal`).toBeTruthy();
        for (const [name, prop] of Object.entries((tpl.inputSchema.properties ?? {}) as Record<string, { title?: string; description?: string }>)) {
          if (prop.title) expect(texts?.inputs?.[name]?.title, `${locale} input ${name} title`).toBeTruthy();
          if (prop.description) expect(texts?.inputs?.[name]?.description, `${locale} input ${name} description`).toBeTruthy();
        }
        for (const step of tpl.plan.steps) if (step.title) expect(texts?.steps?.[step.id]?.title, `${locale} step ${step.id}`).toBeTruthy();
      }
    });
  }

  it('refuses a translation with an unknown language or field', () => {
    const base = { id: 'x-tpl', name: 'X', plan: { steps: [{ id: 'a', instruction: 'do' }] } };
    expect(() => new TemplateStore().add({ ...base, i18n: { fr: { name: 'X' } } })).toThrow();
    expect(() => new TemplateStore().add({ ...base, i18n: { 'zh-CN': { name: 'X', colour: 'red' } } })).toThrow();
    expect(new TemplateStore().add({ ...base, i18n: { 'zh-CN': { name: '某' } } }).name).toBe('X');
  });
});

describe('creating from a template in zh-CN', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('starts the flow with the Chinese name, input titles, defaults and step titles; English without the header', async () => {
    const zh = await t.api('POST', '/api/workflows', { templateId: 'fetch-summarize' }, { 'accept-language': 'zh-CN,zh;q=0.9' });
    expect(zh.status, JSON.stringify(zh.body)).toBe(200);
    expect(zh.body.name).toBe('获取网页并总结');
    expect(zh.body.inputSchema.properties.focus).toMatchObject({ title: '重点关注', default: '要点' });
    expect(zh.body.plan.steps.map((s: { title?: string }) => s.title)).toEqual(['获取网页', '总结']);
    const start = zh.body.graph.nodes.find((n: { type: string }) => n.type === 'start');
    expect(start.data.fields.find((f: { name: string }) => f.name === 'url').label).toBe('网页地址');
    expect(zh.body.graph.nodes.find((n: { id: string }) => n.id === 'summarize').data.title).toBe('总结');
    const en = await t.api('POST', '/api/workflows', { templateId: 'fetch-summarize' });
    expect(en.body.name).toBe('Fetch a page and summarize it');
    expect(en.body.plan.steps[0].title).toBe('Fetch the page');
  });
});
