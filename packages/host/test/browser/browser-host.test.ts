import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packPlugin } from '@fengyu/plugin-sdk/pack';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSessionsOf } from '../../src/tools/browser/browser.source';
import { type Fixture, startFixture, TABLE_ROWS } from '../support/browser-fixture';
import { auto, type SseEvent, startTestHost, type TestHost } from '../support/host';

/**
 * The browser tools inside a real host: catalog entries, supplied-workflow runs streamed over
 * SSE (compact results, screenshots as FileRefs), the session closed with its run, the
 * permission mode and WebFetch(domain:…) rules on navigation, and the "Web table → Excel"
 * template end to end with the official Excel plugin (packed and installed here, real worker).
 */

const PLUGINS = join(import.meta.dirname, '../../../plugins');
let t: TestHost;
let site: Fixture;
let tmp: string;

async function run(steps: Array<Record<string, unknown>>, config: Record<string, unknown> = auto): Promise<{ runId: string; events: SseEvent[]; steps: Map<string, any> }> {
  const res = await t.api('POST', '/api/agent/run', { config, workflow: { steps } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  const events = await t.stream(runId);
  const done = new Map(events.filter((e) => e.type === 'step_complete').map((e) => [e.data.stepId as string, e.data]));
  return { runId, events, steps: done };
}

async function allowPrivate(on: boolean) {
  expect((await t.api('PATCH', '/api/settings', { webFetch: { allowPrivateNetwork: on } })).status).toBe(200);
}

beforeAll(async () => {
  site = await startFixture();
  tmp = mkdtempSync(join(tmpdir(), 'fengyu-browser-host-'));
  const packed = await packPlugin(join(PLUGINS, 'excel'), join(tmp, 'excel.fyp'));
  t = await startTestHost({ sandbox: 'auto' });
  const res = await t.upload('/api/plugins', readFileSync(packed.file), 'plugin.fyp');
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}, 180_000);

afterAll(async () => {
  await t?.close();
  await site?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('browser tools in the host', () => {
  it('lists every browser tool as an available built-in with its effect', async () => {
    const catalog = (await t.api('GET', '/api/agent/tools')).body as Array<{ name: string; effect: string; available: boolean; source: string }>;
    const effects = Object.fromEntries(catalog.filter((e) => e.name.startsWith('browser_')).map((e) => [e.name, e.effect]));
    expect(effects).toEqual({
      browser_navigate: 'external',
      browser_snapshot: 'read',
      browser_click: 'external',
      browser_type: 'external',
      browser_select: 'external',
      browser_wait: 'read',
      browser_screenshot: 'read',
      browser_back: 'external',
      browser_tabs: 'read',
      browser_close: 'read',
      browser_extract_table: 'read',
    });
    for (const e of catalog.filter((x) => x.name.startsWith('browser_'))) expect(e).toMatchObject({ source: 'builtin', available: true, flowNode: { label: expect.any(String) } });
  });

  it('refuses the loopback site under the default policy', async () => {
    await allowPrivate(false);
    const { steps } = await run([{ id: 'open', tool: 'browser_navigate', arguments: { url: `${site.url}/` } }]);
    expect(steps.get('open')).toMatchObject({ status: 'failed' });
    expect(String(steps.get('open').error)).toBe(`Refused to fetch ${site.url}/: loopback address 127.0.0.1`);
  });

  it('runs navigate → snapshot → screenshot with compact results, then closes the session with the run', async () => {
    await allowPrivate(true);
    const { runId, events, steps } = await run([
      { id: 'open', tool: 'browser_navigate', arguments: { url: `${site.url}/` } },
      { id: 'look', tool: 'browser_snapshot', arguments: {}, dependsOn: ['open'] },
      { id: 'shot', tool: 'browser_screenshot', arguments: {}, dependsOn: ['look'] },
    ]);
    expect(events.at(-1)?.type).toBe('complete');
    expect(steps.get('open').result).toMatchObject({ url: `${site.url}/`, title: 'Fixture Home', status: 200 });
    expect(steps.get('look').result.snapshot).toContain('button "Send"');
    const shot = steps.get('shot').result;
    expect(shot).toMatchObject({ mediaType: 'image/png', screenshot: { id: expect.any(String), name: expect.stringMatching(/\.png$/) } });
    // no pixels anywhere in the stream or the stored run
    const wire = JSON.stringify(events);
    expect(wire).not.toMatch(/iVBORw0KGgo/);
    const stored = await t.api('GET', `/api/agent/runs/${runId}`);
    expect(JSON.stringify(stored.body)).not.toMatch(/iVBORw0KGgo/);
    const row = (await t.host.ctx.db.selectFrom('files').selectAll().where('id', '=', shot.screenshot.id).executeTakeFirst()) as { owner: string; size: number; path: string };
    expect(row).toMatchObject({ owner: 'default', size: shot.screenshot.size });
    expect(row.path).toContain(join('runs', runId, 'browser'));
    expect(readFileSync(row.path).subarray(1, 4).toString()).toBe('PNG');
    // the run is over: its session (context, cookies, tabs) is gone
    const pool = browserSessionsOf(t.host.ctx);
    await expect.poll(() => pool?.has({ owner: 'default', runId })).toBe(false);
  });

  it('gates navigation in ask mode but not reading', async () => {
    const res = await t.api('POST', '/api/agent/run', {
      config: { planApproval: false, permissionMode: 'ask' },
      workflow: { steps: [{ id: 'open', tool: 'browser_navigate', arguments: { url: `${site.url}/second` } }, { id: 'look', tool: 'browser_snapshot', arguments: {}, dependsOn: ['open'] }] },
    });
    const runId = res.body.runId as string;
    const gate = await t.waitFor(runId, 'step_approval_requested');
    expect(gate.data.stepId).toBe('open');
    expect((await t.api('POST', `/api/agent/${runId}/approve`)).status).toBe(200);
    const events = await t.stream(runId);
    expect(events.filter((e) => e.type === 'step_approval_requested').map((e) => e.data.stepId)).toEqual(['open']);
    expect(events.at(-1)?.type).toBe('complete');
  });

  it('applies WebFetch(domain:…) deny rules to browser_navigate and to navigations a click starts', async () => {
    await allowPrivate(true);
    const port = new URL(site.url).port;
    const set = await t.api('PATCH', '/api/settings', { permissions: { deny: ['WebFetch(domain:localhost)'], ask: [], allow: [] } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    try {
      const direct = await run([{ id: 'open', tool: 'browser_navigate', arguments: { url: `http://localhost:${port}/second` } }]);
      expect(direct.steps.get('open').status).toBe('failed');
      expect(String(direct.steps.get('open').error)).toContain('WebFetch(domain:localhost)');
      // a link on an allowed page that leads to the denied host: the click's navigation is refused
      const catalog = await t.host.ctx.catalog.snapshot('default');
      const ctx = { signal: new AbortController().signal, owner: 'default', conversationId: 'deny-click', permissionMode: 'full-access' as const, grants: [] };
      const call = (name: string, args: Record<string, unknown>) => catalog.get(name)?.invoke(args, ctx) as Promise<any>;
      await call('browser_navigate', { url: `${site.url}/to-localhost` });
      const snap = (await call('browser_snapshot', {})).snapshot as string;
      const ref = /link "Away" \[ref=([a-z0-9]+)\]/.exec(snap)?.[1] as string;
      const before = site.requests.length;
      const clicked = await call('browser_click', { ref });
      expect(clicked.url).not.toContain('localhost');
      expect(clicked.blocked).toEqual([{ url: `http://localhost:${port}/second`, reason: expect.stringContaining('denied by rule WebFetch(domain:localhost)') }]);
      expect(site.requests.slice(before)).not.toContain('GET /second');
      // a redirect hop Chromium follows by itself into the denied host: refused before contact
      const hopFrom = site.requests.length;
      await expect(call('browser_navigate', { url: `${site.url}/redirect-to-localhost` })).rejects.toMatchObject({ code: 'browser_navigation_denied' });
      expect(site.requests.slice(hopFrom)).toEqual(['GET /redirect-to-localhost']);
      const hop = await run([{ id: 'open', tool: 'browser_navigate', arguments: { url: `${site.url}/redirect-to-localhost` } }]);
      expect(hop.steps.get('open').status).toBe('failed');
      expect(String(hop.steps.get('open').error)).toContain('WebFetch(domain:localhost)');
      // a sub-resource on the denied host is never fetched either
      const imgFrom = site.requests.length;
      const pictures = await call('browser_navigate', { url: `${site.url}/img-localhost` });
      expect(pictures.title).toBe('Pictures');
      expect(pictures.blocked).toEqual([{ url: `http://localhost:${port}/pixel.png`, reason: expect.stringContaining('WebFetch(domain:localhost)') }]);
      expect(site.requests.slice(imgFrom)).not.toContain('GET /pixel.png');
      await call('browser_close', {});
    } finally {
      await t.api('PATCH', '/api/settings', { permissions: { deny: [], ask: [], allow: [] } });
    }
  });
});

describe('template: Web table → Excel', () => {
  it('opens the page, reads its table and saves it as a workbook', async () => {
    await allowPrivate(true);
    const gallery = (await t.api('GET', '/api/workflow-templates')).body.templates as Array<Record<string, any>>;
    expect(gallery.find((x) => x.id === 'browser-table-excel')?.missingTools).toEqual([]);
    const created = await t.api('POST', '/api/workflows', { templateId: 'browser-table-excel' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const started = await t.api('POST', `/api/workflows/${created.body.id}/run`, { inputs: { url: `${site.url}/`, fileName: 'stock.xlsx' }, config: { permissionMode: 'approve-for-me' } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const runId = started.body.runId as string;
    const events = await t.stream(runId);
    const run = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    expect(run.status, JSON.stringify(events.at(-1)?.data)).toBe('completed');
    const save = run.executions.find((e: { stepId: string }) => e.stepId === 'save').result;
    expect(save.file).toMatchObject({ name: 'stock.xlsx', rowCount: 3 });
    expect(save.file.path).toContain(join('runs', runId, 'shared', 'output'));
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(save.file.path);
    const ws = wb.worksheets[0] as ExcelJS.Worksheet;
    const values = ws.getSheetValues().slice(1).map((r) => (r as unknown[]).slice(1));
    expect(values).toEqual([['Product', 'Price', 'Stock'], ...TABLE_ROWS.map(([p, price, stock]) => [p, Number(price), Number(stock)])]);
  });
});
