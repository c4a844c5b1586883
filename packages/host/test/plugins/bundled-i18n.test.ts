import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCALES, MESSAGES, type PluginManifest } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * The official plugins speak every UI language: their manifests translate the plugin's name and
 * description, every tool's description and every flow node's label, help and field labels; the
 * host hands those texts to the UI (catalog `flowNode.i18n`, plugin list `i18n`).
 */

const PLUGINS = join(import.meta.dirname, '../../../plugins');
const manifest = (p: string) => JSON.parse(readFileSync(join(PLUGINS, p, 'manifest.json'), 'utf8')) as PluginManifest;
const others = LOCALES.filter((l) => l !== 'en');

describe('bundled manifests translate every text a user sees', () => {
  for (const p of ['excel', 'email']) {
    it(`${p}: name, description, each tool and each flow node field`, () => {
      const m = manifest(p);
      for (const locale of others) {
        const texts = m.i18n?.[locale];
        expect(texts?.name, `${p} ${locale} name`).toBeTruthy();
        expect(texts?.description, `${p} ${locale} description`).toBeTruthy();
        for (const tool of m.aiTools ?? []) expect(texts?.tools?.[tool.name]?.description, `${p} ${locale} ${tool.name}`).toBeTruthy();
        for (const node of m.flowNodes ?? []) {
          const tt = texts?.tools?.[node.tool];
          expect(tt?.label, `${p} ${locale} ${node.tool} label`).toBeTruthy();
          if (node.help) expect(tt?.help, `${p} ${locale} ${node.tool} help`).toBeTruthy();
          if (node.category) expect(tt?.category, `${p} ${locale} ${node.tool} category`).toBeTruthy();
          for (const [field, f] of Object.entries({ ...(node.inputs ?? {}), ...(node.outputs ?? {}) })) {
            const ft = tt?.inputs?.[field] ?? tt?.outputs?.[field];
            if (f.label) expect(ft?.label, `${p} ${locale} ${node.tool}.${field} label`).toBeTruthy();
            if (f.help) expect(ft?.help, `${p} ${locale} ${node.tool}.${field} help`).toBeTruthy();
          }
        }
      }
    });
  }
});

describe('the host hands the translations to the UI', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost({ bundledPluginDirs: [join(PLUGINS, 'excel/dist'), join(PLUGINS, 'email/dist')] });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('as flowNode.i18n in the catalog and as i18n in the plugin list', async () => {
    const tools = (await t.api('GET', '/api/agent/tools')).body as Array<{ name: string; flowNode?: { i18n?: Record<string, { label?: string; inputs?: Record<string, { label?: string }> }> } }>;
    const analyze = tools.find((x) => x.name === 'excel_analyze');
    expect(analyze?.flowNode?.i18n?.['zh-CN']).toMatchObject({ label: '分析工作簿', inputs: { filePath: { label: '工作簿' } } });
    const plugins = (await t.api('GET', '/api/plugins')).body as Array<{ id: string; i18n?: Record<string, { name?: string; tools?: Record<string, string> }> }>;
    const email = plugins.find((p) => p.id === 'fan.summer.email');
    expect(email?.i18n?.['zh-CN']?.name).toBe('电子邮件');
    expect(email?.i18n?.['zh-CN']?.tools?.confirm_send).toContain('发送');
  });

  const HAN = /\p{Script=Han}/u;
  type Entry = { name: string; source: string; description: string; inputSchema: { properties?: Record<string, unknown> }; flowNode?: { inputs?: Record<string, unknown>; i18n?: Record<string, { inputs?: Record<string, { label?: string }> }> } };

  it('gives every plugin tool its zh-CN description and every field of a plugin node a translated label', async () => {
    const zh = (await t.api('GET', '/api/agent/tools', undefined, { 'accept-language': 'zh-CN' })).body as Entry[];
    const plugin = zh.filter((e) => e.source === 'plugin');
    expect(plugin.length).toBeGreaterThan(10);
    expect(plugin.filter((e) => !HAN.test(e.description)).map((e) => e.name)).toEqual([]);
    // the host's own tools too (their texts live in the one table, protocol i18n/tools.ts), and the
    // table's English is each tool's own description (a changed description needs its translation redone)
    const own = (e: Entry & { id?: string }) => e.source === 'builtin' && !e.description.startsWith('test tool ');
    const builtin = zh.filter(own);
    expect(builtin.length).toBeGreaterThan(20);
    expect(builtin.filter((e) => !HAN.test(e.description)).map((e) => `${e.name}: ${e.description}`)).toEqual([]);
    const enOwn = (await t.api('GET', '/api/agent/tools')).body.filter(own) as Entry[];
    expect(enOwn.filter((e) => MESSAGES.en[`tool_desc_${e.name}`] !== e.description).map((e) => e.name)).toEqual([]);
    const unlabelled = plugin.flatMap((e) => (e.flowNode ? Object.keys(e.inputSchema.properties ?? {}).filter((k) => !HAN.test(e.flowNode?.i18n?.['zh-CN']?.inputs?.[k]?.label ?? '')).map((k) => `${e.name}.${k}`) : []));
    expect(unlabelled).toEqual([]);
    // English callers (and models) keep the declared text
    const en = (await t.api('GET', '/api/agent/tools')).body as Entry[];
    expect(en.find((e) => e.name === 'excel_write_rows')?.description).toMatch(/^Write rows/);
  });

  it('names a missing argument by its field label, in English and Chinese', async () => {
    const plan = { workflow: { steps: [{ id: 'look', tool: 'excel_analyze', arguments: { headerRow: 0 } }] }, config: { planApproval: false } };
    const en = await t.api('POST', '/api/agent/run', plan);
    expect(en.status).toBe(400);
    const texts = (en.body.error.details as Array<{ message: string }>).map((d) => d.message).sort();
    expect(texts).toEqual(['Step "look": Header row must be at least 1.', 'Step "look": Workbook is required.']);
    const zh = await t.api('POST', '/api/agent/run', plan, { 'accept-language': 'zh-CN' });
    expect((zh.body.error.details as Array<{ message: string }>).map((d) => d.message).sort()).toEqual(['步骤 "look"：“工作簿”为必填项。', '步骤 "look"：“表头行”不能小于 1。']);
    expect(zh.body.error.message).not.toMatch(/\{\w+\}/);
  });
});
