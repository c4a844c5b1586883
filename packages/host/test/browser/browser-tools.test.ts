import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localize } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressPolicy } from '../../src/net/address-policy';
import { systemResolver } from '../../src/net/safe-fetch';
import { registerBrowserErrors } from '../../src/tools/browser/browser.source';
import { findChromium } from '../../src/tools/browser/chromium';
import { BrowserSessions, browserEnv } from '../../src/tools/browser/sessions';
import { createBrowserTools } from '../../src/tools/browser/tools';
import { modelImageOf } from '../../src/tools/model-image';
import type { Tool, ToolContext } from '../../src/tools/tool';
import { type Fixture, startFixture, TABLE_ROWS } from '../support/browser-fixture';

/**
 * The browser tools against real pages in real Chromium: a loopback fixture site, the private
 * network opt-in for the happy paths, and the same site refused (or its private redirects and
 * sub-resources refused) without it.
 */

registerBrowserErrors();
const CHROMIUM = findChromium({ path: process.env.PATH });
let site: Fixture;
let secret: Fixture;
let home: string;
let sessions: BrowserSessions;
let policy: AddressPolicy = { allowPrivateNetwork: true };
const files: Array<{ owner: string; name: string; path: string; size: number; sha256: string }> = [];
let tools: Map<string, Tool>;

function ctx(runId: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, owner: 'default', runId, permissionMode: 'full-access', grants: [], ...extra };
}

async function call(runId: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
  return (tools.get(name) as Tool).invoke(args, ctx(runId));
}

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string; zh: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as { code: string; params: Record<string, unknown> };
    return { code: err.code, message: localize(err.code, err.params, 'en'), zh: localize(err.code, err.params, 'zh-CN') };
  }
  throw new Error('expected a failure');
}

/** The ref of the first snapshot line matching `pattern`. */
function ref(snapshot: string, pattern: RegExp): string {
  const line = snapshot.split('\n').find((l) => pattern.test(l));
  const m = line && /\[ref=([a-z0-9]+)\]/.exec(line);
  if (!m) throw new Error(`no ref for ${pattern} in\n${snapshot}`);
  return m[1] as string;
}

beforeAll(async () => {
  expect('path' in CHROMIUM, 'these tests need Debian chromium (apt-get install chromium)').toBe(true);
  secret = await startFixture();
  site = await startFixture({ privateTarget: `${secret.url}/` });
  home = mkdtempSync(join(tmpdir(), 'fengyu-browser-'));
  sessions = new BrowserSessions({ executable: () => CHROMIUM, home, resolver: systemResolver, maxSessions: 8, env: browserEnv(home, { LANG: 'C.UTF-8', FENGYU_TEST_SECRET: 'hunter2' }) });
  tools = new Map(
    createBrowserTools({
      sessions,
      available: () => true,
      policy: async () => policy,
      files: {
        register: async (owner, f) => {
          files.push({ owner, ...f });
          return { id: `f${files.length}`, name: f.name, size: f.size, sha256: f.sha256 };
        },
      },
    }).map((t) => [t.name, t]),
  );
}, 60_000);

afterAll(async () => {
  await sessions?.closeAll();
  await site?.close();
  await secret?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('browser tools on a local site (private network allowed)', () => {
  it('navigates, snapshots with refs, clicks a link, goes back, and lists tabs', async () => {
    policy = { allowPrivateNetwork: true };
    const nav = await call('r1', 'browser_navigate', { url: `${site.url}/` });
    expect(nav).toMatchObject({ url: `${site.url}/`, title: 'Fixture Home', status: 200, tab: 0 });
    expect(site.requests).toEqual(expect.arrayContaining(['GET /', 'GET /style.css', 'GET /pixel.png']));
    const snap = await call('r1', 'browser_snapshot');
    expect(snap.truncated).toBe(false);
    expect(snap.snapshot).toContain('heading "Fixture Home"');
    const again = await call('r1', 'browser_snapshot');
    expect(again.snapshot).toBe(snap.snapshot);
    const link = ref(snap.snapshot, /link "Go to the second page"/);
    const clicked = await call('r1', 'browser_click', { ref: link });
    expect(clicked).toMatchObject({ clicked: link, url: `${site.url}/second`, title: 'Second Page' });
    expect((await call('r1', 'browser_wait', { text: 'You arrived.' })).found).toBe('text "You arrived."');
    const back = await call('r1', 'browser_back');
    expect(back).toMatchObject({ wentBack: true, url: `${site.url}/`, title: 'Fixture Home' });

    const popup = ref((await call('r1', 'browser_snapshot')).snapshot, /link "Open in a new tab"/);
    const opened = await call('r1', 'browser_click', { ref: popup });
    expect(opened).toMatchObject({ url: `${site.url}/second`, tab: 1 });
    const tabs = await call('r1', 'browser_tabs', { action: 'list' });
    expect(tabs.tabs.map((x: { title: string; current: boolean }) => [x.title, x.current])).toEqual([
      ['Fixture Home', false],
      ['Second Page', true],
    ]);
    await call('r1', 'browser_tabs', { action: 'close' });
    const after = await call('r1', 'browser_tabs', { action: 'select', index: 0 });
    expect(after.tabs).toHaveLength(1);
    expect((await failure(call('r1', 'browser_tabs', { action: 'select', index: 5 }))).message).toBe('There is no tab 5; this session has 1 tab(s).');
  });

  it('fills a form (type, select, submit) and keeps its cookies per run only', async () => {
    await call('r2', 'browser_navigate', { url: `${site.url}/` });
    const snap = (await call('r2', 'browser_snapshot')).snapshot as string;
    await call('r2', 'browser_type', { ref: ref(snap, /textbox "Query"/), text: 'lamps & tables' });
    const sel = await call('r2', 'browser_select', { ref: ref(snap, /combobox "Colour"/), values: ['Green'] });
    expect(sel.selected).toEqual(['green']);
    const sent = await call('r2', 'browser_click', { ref: ref(snap, /button "Send"/) });
    expect(sent).toMatchObject({ url: `${site.url}/submit`, title: 'Submitted' });
    expect((await call('r2', 'browser_snapshot')).snapshot).toContain('Got q=lamps & tables color=green via POST');
    await call('r2', 'browser_navigate', { url: `${site.url}/cookies` });
    expect((await call('r2', 'browser_snapshot')).snapshot).toContain('cookie:seen=1; flavour=oat');
    // another run: its own context, none of the first run's cookies
    await call('r3', 'browser_navigate', { url: `${site.url}/cookies` });
    expect((await call('r3', 'browser_snapshot')).snapshot).toContain('cookie:(none)');
    // type + submit presses Enter in the field
    await call('r3', 'browser_navigate', { url: `${site.url}/` });
    const s3 = (await call('r3', 'browser_snapshot')).snapshot as string;
    const typed = await call('r3', 'browser_type', { ref: ref(s3, /textbox "Query"/), text: 'enter', submit: true });
    expect(typed).toMatchObject({ submitted: true, title: 'Submitted' });
    await call('r3', 'browser_close');
  });

  it('extracts a table as rows', async () => {
    const got = await call('r1', 'browser_extract_table', {});
    expect(got.columns).toEqual(['Product', 'Price', 'Stock']);
    expect(got.rows).toEqual(TABLE_ROWS.map(([Product, Price, Stock]) => ({ Product, Price, Stock })));
    expect(got).toMatchObject({ rowCount: 3, totalRows: 3, truncated: false, caption: 'Stock' });
    const cell = ref((await call('r1', 'browser_snapshot')).snapshot, /cell "Gadget"/);
    expect((await call('r1', 'browser_extract_table', { ref: cell, maxRows: 1 })).rows).toEqual([{ Product: 'Widget', Price: '12.5', Stock: '40' }]);
    expect((await failure(call('r1', 'browser_extract_table', { index: 3 }))).code).toBe('browser_no_table');
  });

  it('saves a screenshot as a PNG FileRef; the pixels travel only as a model image', async () => {
    const shot = await call('r1', 'browser_screenshot', { fullPage: true });
    expect(shot.screenshot).toMatchObject({ id: expect.any(String), name: expect.stringMatching(/^screenshot-.*\.png$/) });
    const json = JSON.stringify(shot);
    expect(json.length).toBeLessThan(600);
    const saved = files.at(-1) as (typeof files)[number];
    expect(saved.path.startsWith(join(home, 'runs', 'r1', 'browser'))).toBe(true);
    const png = readFileSync(saved.path);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.length).toBe(saved.size);
    expect(modelImageOf(shot)?.data.equals(png)).toBe(true);
    expect(modelImageOf(JSON.parse(json))).toBeUndefined();
  });

  it('waits for late text, and times out with a clear error', async () => {
    await call('r1', 'browser_navigate', { url: `${site.url}/late` });
    expect((await call('r1', 'browser_wait', { text: 'Ready now', timeoutMs: 10_000 })).found).toBe('text "Ready now"');
    const slow = await failure(call('r1', 'browser_wait', { text: 'Never there', timeoutMs: 50 }));
    expect(slow.message).toBe('Waited 50 ms for text "Never there", without success.');
    expect(slow.zh).toContain('50');
  });

  it('refuses downloads: nothing is written', async () => {
    await call('r1', 'browser_navigate', { url: `${site.url}/` });
    const dl = ref((await call('r1', 'browser_snapshot')).snapshot, /link "Get the report"/);
    const got = await call('r1', 'browser_click', { ref: dl });
    expect(got.downloadsRefused).toEqual([{ url: `${site.url}/download`, suggestedFilename: 'report.bin' }]);
    const written = existsSync(join(home, 'runs', 'r1', 'browser')) ? readdirSync(join(home, 'runs', 'r1', 'browser')) : [];
    expect(written.filter((f) => !f.endsWith('.png'))).toEqual([]);
  });

  it('rejects bad arguments and stale refs with errors naming the field', async () => {
    expect((await failure(call('r1', 'browser_click', {}))).message).toContain('browser_click ref:');
    expect((await failure(call('r1', 'browser_click', { ref: 'button' }))).message).toContain('expected an element ref');
    expect((await failure(call('r1', 'browser_wait', { text: 'a', ref: 'e1' }))).message).toContain('give exactly one of "text" or "ref"');
    const stale = await failure(call('r1', 'browser_click', { ref: 'e9999' }));
    expect(stale.code).toBe('browser_unknown_ref');
    expect(stale.zh).toContain('e9999');
    expect((await failure(call('r-none', 'browser_snapshot'))).code).toBe('browser_no_page');
    expect(await call('r-none', 'browser_close')).toEqual({ closed: false });
  });
});

describe('the address policy inside the browser', () => {
  it('refuses the loopback site itself under the default policy, before any request', async () => {
    policy = { allowPrivateNetwork: false };
    const before = site.requests.length;
    const refused = await failure(call('p1', 'browser_navigate', { url: `${site.url}/` }));
    expect(refused.code).toBe('web_fetch_blocked');
    expect(refused.message).toBe(`Refused to fetch ${site.url}/: loopback address 127.0.0.1`);
    const named = await failure(call('p1', 'browser_navigate', { url: `http://localhost:${new URL(site.url).port}/` }));
    expect(named.message).toContain('loopback address localhost');
    expect(site.requests.length).toBe(before);
  });

  it('refuses non-http(s) URLs and credentials whatever the policy', async () => {
    policy = { allowPrivateNetwork: true };
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'chrome://settings', 'data:text/html,hi']) {
      const r = await failure(call('p2', 'browser_navigate', { url }));
      expect(r.code, url).toBe('web_fetch_blocked');
      expect(r.message, url).toContain('is not http or https');
    }
    expect((await failure(call('p2', 'browser_navigate', { url: `http://u:p@127.0.0.1:${new URL(site.url).port}/` }))).message).toContain('credentials');
  });

  it('refuses a redirect from an allowed origin to a private address (metadata, loopback)', async () => {
    // Only the fixture's own origin is exempt; everything it points at is checked.
    policy = { allowPrivateNetwork: false, trustedOrigins: [site.url] };
    const beforeSecret = secret.requests.length;
    const hop = await failure(call('p3', 'browser_navigate', { url: `${site.url}/redirect-private` }));
    expect(hop.code).toBe('web_fetch_blocked');
    expect(hop.message).toBe(`Refused to fetch ${secret.url}/: loopback address 127.0.0.1`);
    expect(secret.requests.length).toBe(beforeSecret);
    const local = await call('p3', 'browser_navigate', { url: `${site.url}/redirect-local` });
    expect(local).toMatchObject({ url: `${site.url}/second`, title: 'Second Page' });
  });

  it('refuses private sub-resources and fetches while the page itself loads', async () => {
    policy = { allowPrivateNetwork: false, trustedOrigins: [site.url] };
    const nav = await call('p3', 'browser_navigate', { url: `${site.url}/subresources` });
    expect(nav.title).toBe('Mixed');
    const reasons = (nav.blocked as Array<{ url: string; reason: string }>).map((b) => b.reason).sort();
    expect(reasons).toEqual(expect.arrayContaining(['metadata address 169.254.169.254', 'loopback address 127.0.0.1']));
    await expect.poll(async () => JSON.stringify((await call('p3', 'browser_tabs', { action: 'list' })) && sessions.get({ owner: 'default', runId: 'p3' })?.blocked.map((b) => b.reason))).toContain('private address 192.168.1.1');
    expect(secret.requests).not.toContain('GET /pic.png');
  });
});

describe('sessions', () => {
  it('bounds the number of live sessions with a localized error', async () => {
    policy = { allowPrivateNetwork: true };
    await sessions.closeAll().then(() => undefined);
    // closeAll shuts the pool for good; a fresh pool for this test
    const pool = new BrowserSessions({ executable: () => CHROMIUM, home, resolver: systemResolver, maxSessions: 2, env: browserEnv(home) });
    const t = new Map(createBrowserTools({ sessions: pool, available: () => true, policy: async () => policy, files: { register: async () => ({ id: 'x', name: 'x', size: 0, sha256: '' }) } }).map((x) => [x.name, x]));
    const nav = (runId: string) => (t.get('browser_navigate') as Tool).invoke({ url: `${site.url}/second` }, ctx(runId));
    try {
      await nav('a');
      await nav('b');
      const full = await failure(nav('c'));
      expect(full.code).toBe('browser_sessions_exhausted');
      expect(full.message).toContain('Too many open browser sessions (2)');
      expect(full.zh).toContain('打开的浏览器会话过多（2）');
      expect(await (t.get('browser_close') as Tool).invoke({}, ctx('a'))).toEqual({ closed: true });
      await nav('c');
      expect(pool.size).toBe(2);
    } finally {
      await pool.closeAll();
    }
  });

  it('closes a session once it has been idle', async () => {
    const pool = new BrowserSessions({ executable: () => CHROMIUM, home, resolver: systemResolver, idleMs: 200, env: browserEnv(home) });
    const t = createBrowserTools({ sessions: pool, available: () => true, policy: async () => policy, files: { register: async () => ({ id: 'x', name: 'x', size: 0, sha256: '' }) } });
    try {
      await (t.find((x) => x.name === 'browser_navigate') as Tool).invoke({ url: `${site.url}/second` }, ctx('idle'));
      expect(pool.size).toBe(1);
      await expect.poll(() => pool.size, { timeout: 10_000 }).toBe(0);
      expect((await failure((t.find((x) => x.name === 'browser_snapshot') as Tool).invoke({}, ctx('idle')))).code).toBe('browser_no_page');
    } finally {
      await pool.closeAll();
    }
  });

  it('runs Chromium with an explicit environment: no host secrets', async () => {
    process.env.FENGYU_TEST_SECRET = 'hunter2';
    const pool = new BrowserSessions({ executable: () => CHROMIUM, home, resolver: systemResolver, env: browserEnv(home, process.env) });
    try {
      const t = createBrowserTools({ sessions: pool, available: () => true, policy: async () => policy, files: { register: async () => ({ id: 'x', name: 'x', size: 0, sha256: '' }) } });
      await (t.find((x) => x.name === 'browser_navigate') as Tool).invoke({ url: `${site.url}/second` }, ctx('env'));
      const envs = readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .map((pid) => {
          try {
            return { cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8'), env: readFileSync(`/proc/${pid}/environ`, 'utf8') };
          } catch {
            return undefined;
          }
        })
        .filter((p): p is { cmd: string; env: string } => !!p && p.cmd.includes('chromium') && p.env.includes(`HOME=${join(home, 'browser', 'process')}`));
      expect(envs.length).toBeGreaterThan(0);
      for (const p of envs) {
        expect(p.env).not.toContain('hunter2');
        expect(p.env).not.toContain('FENGYU_TEST_SECRET');
      }
    } finally {
      delete process.env.FENGYU_TEST_SECRET;
      await pool.closeAll();
    }
  });

  it('without Chromium: the tools are listed as unavailable and explain how to install it', async () => {
    const missing = findChromium({ path: '/nonexistent', isExecutable: () => false });
    expect('missing' in missing).toBe(true);
    const pool = new BrowserSessions({ executable: () => missing, home, resolver: systemResolver });
    const t = createBrowserTools({ sessions: pool, available: () => 'path' in missing, policy: async () => policy, files: { register: async () => ({ id: 'x', name: 'x', size: 0, sha256: '' }) } });
    expect(t.every((x) => x.available === false)).toBe(true);
    const r = await failure((t.find((x) => x.name === 'browser_navigate') as Tool).invoke({ url: `${site.url}/` }, ctx('none')));
    expect(r.code).toBe('browser_unavailable');
    expect(r.message).toContain('apt-get install chromium');
    expect(r.zh).toContain('apt-get install chromium');
    expect(pool.size).toBe(0);
    await pool.closeAll();
  });
});
