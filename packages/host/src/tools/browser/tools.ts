import { createHash, randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FengYuError, isFengYuError, type JsonSchema, stableHash, type ToolEffect } from '@fengyu/protocol';
import type { Locator, Page } from 'playwright-core';
import { z } from 'zod';
import { type AddressPolicy, checkUrl } from '../../net/address-policy';
import { attachModelImage } from '../model-image';
import type { Tool, ToolContext } from '../tool';
import { blockedError } from './network';
import { BLOCKED_HEADER } from './proxy';
import type { BrowserSession, BrowserSessions, SessionInit, SessionKey } from './sessions';
import { extractTableInPage, type TableResult } from './table';

/**
 * The browser_* tools: a stateful browser the model and workflows drive through accessibility
 * snapshots with element refs. Effects: reading the page (snapshot, screenshot, table, wait,
 * tabs, close) is `read`; anything that makes the page talk to a server on the user's behalf
 * (navigate, back, click, type, select) is `external`, so it follows the same permission policy
 * as plugin tools. Results are compact JSON; a screenshot is a FileRef to a PNG in the run's
 * scratch directory, its pixels reach the model only as an image part.
 */

/** A snapshot longer than this is cut at a line boundary and marked `truncated`. */
export const MAX_SNAPSHOT_CHARS = 24_000;
export const NAVIGATION_TIMEOUT_MS = 30_000;
export const ACTION_TIMEOUT_MS = 10_000;
export const MAX_WAIT_MS = 60_000;
/** How long a link click that neither navigated nor downloaded waits for either to show up. */
export const LINK_SETTLE_MS = 1_000;
/** Full-page screenshots are cut at this height (CSS pixels). */
export const MAX_SCREENSHOT_HEIGHT = 8_000;
const REF = /^(?:f\d+)?e\d+$/;

export interface BrowserFileSink {
  /** Registers a file the tool wrote as a FileRef of `owner`. */
  register(owner: string, file: { name: string; path: string; size: number; sha256: string }): Promise<{ id: string; name: string; size: number; sha256: string }>;
}

export interface BrowserToolDeps {
  sessions: BrowserSessions;
  /** The owner's address policy (`webFetch.allowPrivateNetwork`), read on every call. */
  policy: (owner: string) => Promise<AddressPolicy>;
  /** Whether Chromium is present right now (catalog availability). */
  available: () => boolean;
  files: BrowserFileSink;
  /** Deny rules for top-frame navigations (clicks, redirects), per owner and mode. */
  navigationGate?: (owner: string, ctx: ToolContext) => (url: string) => Promise<string | undefined>;
}

type Spec = {
  name: string;
  description: string;
  effect: ToolEffect;
  inputSchema: JsonSchema;
  args: z.ZodType;
  /** True when the tool needs an open session (false: opens one); `undefined`: any state. */
  run: (s: BrowserSession, args: never, ctx: ToolContext, deps: BrowserToolDeps) => Promise<object>;
  /** The tool may run without an open session (browser_close, browser_tabs list). */
  noSession?: (ctx: ToolContext) => Promise<object>;
  opens?: boolean;
  idempotent?: boolean;
};

/** Canvas labels: the browser tools are offered in the flow palette's web group like declared nodes. */
const FLOW_NODES: Record<string, { label: string; help: string; i18n?: Record<string, { label: string; help: string }> }> = {
  browser_navigate: { label: 'Open web page', help: "Opens an address in the run's browser tab (cookies and forms persist for the run).", i18n: { 'zh-CN': { label: '打开网页', help: '在本次运行的浏览器标签页中打开一个地址（Cookie 和表单在本次运行中保留）。' } } },
  browser_snapshot: { label: 'Read page (snapshot)', help: "The page as an outline of roles, names and text, with element refs for clicking and typing.", i18n: { 'zh-CN': { label: '读取页面（快照）', help: '把页面读成由角色、名称和文字组成的大纲，并给出可用于点击和输入的元素引用。' } } },
  browser_click: { label: 'Click element', help: "Clicks an element by its ref from a snapshot.", i18n: { 'zh-CN': { label: '点击元素', help: '按快照中的引用点击一个元素。' } } },
  browser_type: { label: 'Type into field', help: "Fills a text field by ref; can press Enter to submit.", i18n: { 'zh-CN': { label: '输入文字', help: '按引用填写文本框；可按回车提交。' } } },
  browser_select: { label: 'Choose option', help: "Chooses option(s) of a drop-down by ref.", i18n: { 'zh-CN': { label: '选择选项', help: '按引用选择下拉框中的选项。' } } },
  browser_wait: { label: 'Wait for text', help: "Waits until a text (or element) appears on the page.", i18n: { 'zh-CN': { label: '等待文字', help: '等待页面上出现某段文字（或某个元素）。' } } },
  browser_screenshot: { label: 'Screenshot', help: "Saves the page as a PNG file in the run's files.", i18n: { 'zh-CN': { label: '截图', help: '把页面保存为本次运行文件中的 PNG 图片。' } } },
  browser_back: { label: 'Go back', help: "Goes back one page in the tab's history.", i18n: { 'zh-CN': { label: '后退', help: '在标签页的历史中后退一页。' } } },
  browser_tabs: { label: 'Browser tabs', help: "Lists, opens, selects or closes tabs.", i18n: { 'zh-CN': { label: '浏览器标签页', help: '列出、打开、切换或关闭标签页。' } } },
  browser_close: { label: 'Close browser', help: "Closes the run's browser session and forgets its cookies.", i18n: { 'zh-CN': { label: '关闭浏览器', help: '关闭本次运行的浏览器会话并清除其 Cookie。' } } },
  browser_extract_table: { label: 'Read table', help: "Reads an HTML table of the page as rows (columns + one object per row), ready for Excel.", i18n: { 'zh-CN': { label: '读取表格', help: '把页面中的 HTML 表格读成行（列名 + 每行一个对象），可直接写入 Excel。' } } },
};

const obj = (properties: Record<string, unknown>, required: string[] = []): JsonSchema => ({ type: 'object', additionalProperties: false, properties, ...(required.length ? { required } : {}) }) as JsonSchema;
const refProp = { type: 'string', pattern: REF.source, description: 'Element ref from the latest browser_snapshot, e.g. "e12".' };
const Ref = z.string().regex(REF, 'expected an element ref such as "e12" from browser_snapshot');

function parse<T>(tool: string, schema: z.ZodType<T>, args: Record<string, unknown>): T {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const reason = parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
  throw new FengYuError('invalid_request', { reason: `${tool} ${reason}` });
}

function page(s: BrowserSession): Page {
  const p = s.pages[s.current];
  if (!p || p.isClosed()) throw new FengYuError('browser_no_page');
  return p;
}

function failure(action: string, e: unknown): FengYuError {
  if (isFengYuError(e)) return e as FengYuError;
  const msg = (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
  return new FengYuError('browser_action_failed', { action, reason: msg.replace(/^[\w.]+: /, '') }, undefined, { cause: e });
}

async function target(p: Page, ref: string): Promise<Locator> {
  const loc = p.getByRef(ref);
  let n = 0;
  try {
    n = await loc.count();
  } catch {
    n = 0;
  }
  if (n !== 1) throw new FengYuError('browser_unknown_ref', { ref });
  return loc;
}

/** Title and URL of the page, plus what the network guard refused since `since`. */
async function pageState(s: BrowserSession, p: Page, blockedBefore: number): Promise<Record<string, unknown>> {
  const blocked = s.blocked.filter((b) => b.seq > blockedBefore);
  return {
    url: p.url(),
    title: await p.title().catch(() => ''),
    tab: s.current,
    ...(blocked.length ? { blocked: blocked.map((b) => ({ url: b.url, reason: b.reason })) } : {}),
  };
}

/** After an action: a page the action opened becomes current; refused downloads are reported. */
async function settle(s: BrowserSession, before: { pages: number; downloads: number }): Promise<Record<string, unknown>> {
  if (s.pages.length > before.pages) s.current = s.pages.length - 1;
  const p = page(s);
  await p.waitForLoadState('domcontentloaded', { timeout: NAVIGATION_TIMEOUT_MS }).catch(() => {});
  const downloads = s.downloads.filter((d) => d.seq > before.downloads).map((d) => ({ url: d.url, suggestedFilename: d.suggestedFilename }));
  return downloads.length ? { downloadsRefused: downloads } : {};
}

async function opensTab(loc: Locator): Promise<boolean> {
  return loc
    .evaluate((el) => {
      const owner = el.closest('a[href],area[href],form') ?? (el as HTMLButtonElement).form ?? null;
      const target = (el.getAttribute('formtarget') ?? owner?.getAttribute('target') ?? '').toLowerCase();
      return target !== '' && !['_self', '_top', '_parent'].includes(target);
    })
    .catch(() => false);
}

function cut(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const at = text.lastIndexOf('\n', max);
  return { text: text.slice(0, at > 0 ? at : max), truncated: true };
}

const Navigate = z.object({ url: z.string().min(1).max(8192) }).strict();
const Click = z.object({ ref: Ref }).strict();
const Type = z.object({ ref: Ref, text: z.string().max(100_000), submit: z.boolean().optional() }).strict();
const Select = z.object({ ref: Ref, values: z.array(z.string().max(1000)).min(1).max(100) }).strict();
const Wait = z
  .object({ text: z.string().min(1).max(1000).optional(), ref: Ref.optional(), timeoutMs: z.number().int().min(1).max(MAX_WAIT_MS).default(5000) })
  .strict()
  .refine((a) => (a.text === undefined) !== (a.ref === undefined), { message: 'give exactly one of "text" or "ref"' });
const Screenshot = z.object({ fullPage: z.boolean().optional() }).strict();
const Empty = z.object({}).strict();
const Tabs = z
  .object({ action: z.enum(['list', 'new', 'select', 'close']), index: z.number().int().min(0).optional() })
  .strict()
  .refine((a) => a.action !== 'select' || a.index !== undefined, { message: '"select" needs "index"', path: ['index'] });
const Table = z.object({ ref: Ref.optional(), index: z.number().int().min(0).max(1000).optional(), maxRows: z.number().int().min(1).max(5000).optional() }).strict();

async function navigate(s: BrowserSession, args: z.infer<typeof Navigate>): Promise<object> {
  // Scheme, credentials and literal private addresses are refused before any page exists.
  checkUrl(args.url, s.policy);
  if (s.pages.length === 0) {
    await s.context.newPage();
    s.current = s.pages.length - 1;
  }
  const p = page(s);
  const before = s.blockedSeq;
  let status: number | undefined;
  try {
    const res = await p.goto(args.url, { waitUntil: 'load', timeout: NAVIGATION_TIMEOUT_MS });
    status = res?.status();
    if (res?.headers()[BLOCKED_HEADER] !== undefined) throw new Error('refused by the policy proxy');
  } catch (e) {
    // the top-frame refusal, else the proxy's refusal of a redirect hop
    const since = s.blocked.filter((b) => b.seq > before);
    const refused = since.find((b) => b.navigation) ?? since.at(-1);
    if (refused) throw blockedError(refused);
    throw failure('navigate', e);
  }
  return { ...(await pageState(s, p, before)), ...(status !== undefined ? { status } : {}) };
}

const SPECS: Spec[] = [
  {
    name: 'browser_navigate',
    description:
      'Open an http(s) URL in this run\'s browser tab (a real Chromium; cookies and forms persist for the run). Then call browser_snapshot to see the page and its element refs. Private and loopback addresses are refused unless enabled in settings.',
    effect: 'external',
    inputSchema: obj({ url: { type: 'string', minLength: 1, maxLength: 8192, description: 'The http or https URL to open.' } }, ['url']),
    args: Navigate,
    opens: true,
    run: (s, a) => navigate(s, a as z.infer<typeof Navigate>),
  },
  {
    name: 'browser_snapshot',
    description:
      'Accessibility snapshot of the current page: roles, names and text as an indented outline, each element with a ref like [ref=e12] to use with browser_click, browser_type, browser_select, browser_wait and browser_extract_table. Refs stay the same for the same element; take a new snapshot after the page changes.',
    effect: 'read',
    inputSchema: obj({}),
    args: Empty,
    idempotent: true,
    run: async (s) => {
      const p = page(s);
      const raw = await p.ariaSnapshot({ mode: 'ai', timeout: ACTION_TIMEOUT_MS });
      const { text, truncated } = cut(raw, MAX_SNAPSHOT_CHARS);
      return { url: p.url(), title: await p.title(), tab: s.current, snapshot: text, truncated, ...(truncated ? { totalChars: raw.length } : {}) };
    },
  },
  {
    name: 'browser_click',
    description: 'Click the element with this ref (from browser_snapshot). Links may navigate; the result names the page after the click.',
    effect: 'external',
    inputSchema: obj({ ref: refProp }, ['ref']),
    args: Click,
    run: async (s, a: z.infer<typeof Click>) => {
      const p = page(s);
      const loc = await target(p, a.ref);
      const before = { pages: s.pages.length, downloads: s.downloadSeq, blocked: s.blockedSeq };
      // A link or form with a target opens a tab: wait for it so the result names the new page.
      const popup = (await opensTab(loc)) ? p.waitForEvent('popup', { timeout: NAVIGATION_TIMEOUT_MS }).catch(() => null) : null;
      const link = await loc.evaluate((el) => el.closest('a[href],area[href]') !== null).catch(() => false);
      const urlBefore = p.url();
      await loc.click({ timeout: ACTION_TIMEOUT_MS }).catch((e) => {
        throw failure('click', e);
      });
      if (popup) await (await popup)?.waitForLoadState('load', { timeout: NAVIGATION_TIMEOUT_MS }).catch(() => {});
      else if (link && p.url() === urlBefore && s.downloadSeq === before.downloads) {
        // A link whose response is a download ends its navigation without a new page: give the
        // download event (or a late navigation) a moment to arrive so the result reports it.
        await Promise.race([p.waitForEvent('download', { timeout: LINK_SETTLE_MS }), p.waitForEvent('framenavigated', { timeout: LINK_SETTLE_MS })]).catch(() => {});
      }
      const extra = await settle(s, before);
      return { clicked: a.ref, ...(await pageState(s, page(s), before.blocked)), ...extra };
    },
  },
  {
    name: 'browser_type',
    description: 'Replace the text of an input or text area (by ref) with `text`; `submit: true` then presses Enter (which may submit its form).',
    effect: 'external',
    inputSchema: obj({ ref: refProp, text: { type: 'string', maxLength: 100000 }, submit: { type: 'boolean', description: 'Press Enter after typing.' } }, ['ref', 'text']),
    args: Type,
    run: async (s, a: z.infer<typeof Type>) => {
      const p = page(s);
      const loc = await target(p, a.ref);
      const before = { pages: s.pages.length, downloads: s.downloadSeq, blocked: s.blockedSeq };
      try {
        await loc.fill(a.text, { timeout: ACTION_TIMEOUT_MS });
        if (a.submit) await loc.press('Enter', { timeout: ACTION_TIMEOUT_MS });
      } catch (e) {
        throw failure('type', e);
      }
      const extra = await settle(s, before);
      return { typed: a.ref, submitted: a.submit === true, ...(await pageState(s, page(s), before.blocked)), ...extra };
    },
  },
  {
    name: 'browser_select',
    description: 'Choose option(s) of a <select> (by ref), by value or visible label.',
    effect: 'external',
    inputSchema: obj({ ref: refProp, values: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string' }, description: 'Option values or labels.' } }, ['ref', 'values']),
    args: Select,
    run: async (s, a: z.infer<typeof Select>) => {
      const p = page(s);
      const loc = await target(p, a.ref);
      const before = { pages: s.pages.length, downloads: s.downloadSeq, blocked: s.blockedSeq };
      let selected: string[];
      try {
        selected = await loc.selectOption(a.values, { timeout: ACTION_TIMEOUT_MS });
      } catch (e) {
        throw failure('select', e);
      }
      const extra = await settle(s, before);
      return { selected, ...(await pageState(s, page(s), before.blocked)), ...extra };
    },
  },
  {
    name: 'browser_wait',
    description: 'Wait until `text` appears on the page, or the element `ref` is visible, for at most timeoutMs (default 5000, max 60000).',
    effect: 'read',
    inputSchema: obj({ text: { type: 'string', minLength: 1, maxLength: 1000 }, ref: refProp, timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_WAIT_MS, default: 5000 } }),
    args: Wait,
    idempotent: true,
    run: async (s, a: z.infer<typeof Wait>) => {
      const p = page(s);
      const what = a.text !== undefined ? `text "${a.text}"` : `element ${a.ref}`;
      const loc = a.text !== undefined ? p.getByText(a.text).first() : await target(p, a.ref as string);
      try {
        await loc.waitFor({ state: 'visible', timeout: a.timeoutMs });
      } catch (e) {
        if (e instanceof Error && e.name === 'TimeoutError') throw new FengYuError('browser_wait_timeout', { what, timeoutMs: a.timeoutMs });
        throw failure('wait', e);
      }
      return { found: what, url: p.url(), title: await p.title() };
    },
  },
  {
    name: 'browser_screenshot',
    description: 'Screenshot of the current tab as a PNG file (a FileRef in the run\'s files); the image is shown to you when the model supports images. fullPage captures the whole page (cut at 8000 px).',
    effect: 'read',
    inputSchema: obj({ fullPage: { type: 'boolean' } }),
    args: Screenshot,
    run: async (s, a: z.infer<typeof Screenshot>, ctx, deps) => {
      const p = page(s);
      const size = p.viewportSize() ?? { width: 1280, height: 800 };
      let height = size.height;
      if (a.fullPage) height = Math.min(MAX_SCREENSHOT_HEIGHT, Math.ceil(await p.evaluate(() => document.documentElement.scrollHeight)));
      const png = await p.screenshot({ type: 'png', timeout: ACTION_TIMEOUT_MS, ...(a.fullPage ? { fullPage: true, clip: { x: 0, y: 0, width: size.width, height } } : {}) });
      await mkdir(s.dir, { recursive: true });
      const name = `screenshot-${randomUUID().slice(0, 8)}.png`;
      const path = join(s.dir, name);
      await writeFile(path, png, { mode: 0o600 });
      const ref = await deps.files.register(ctx.owner, { name, path, size: png.length, sha256: createHash('sha256').update(png).digest('hex') });
      const result = { screenshot: ref, mediaType: 'image/png', width: size.width, height, fullPage: a.fullPage === true, url: p.url(), title: await p.title() };
      return attachModelImage(result, { data: png, mediaType: 'image/png' });
    },
  },
  {
    name: 'browser_back',
    description: 'Go back one page in the current tab\'s history (this loads the page again from its server).',
    effect: 'external',
    inputSchema: obj({}),
    args: Empty,
    run: async (s) => {
      const p = page(s);
      const before = s.blockedSeq;
      const res = await p.goBack({ waitUntil: 'load', timeout: NAVIGATION_TIMEOUT_MS }).catch((e) => {
        const since = s.blocked.filter((b) => b.seq > before);
        const refused = since.find((b) => b.navigation) ?? since.at(-1);
        throw refused ? blockedError(refused) : failure('back', e);
      });
      return { wentBack: res !== null, ...(await pageState(s, p, before)) };
    },
  },
  {
    name: 'browser_tabs',
    description: 'Tabs of this run\'s browser: "list" them, open a "new" blank tab (then browser_navigate in it), "select" the tab at `index`, or "close" the tab at `index` (default: the current one).',
    effect: 'read',
    inputSchema: obj({ action: { type: 'string', enum: ['list', 'new', 'select', 'close'] }, index: { type: 'integer', minimum: 0 } }, ['action']),
    args: Tabs,
    run: async (s, a: z.infer<typeof Tabs>) => {
      if (a.action === 'new') {
        await s.context.newPage();
        s.current = s.pages.length - 1;
      } else if (a.action === 'select' || a.action === 'close') {
        const index = a.index ?? s.current;
        const tab = s.pages[index];
        if (!tab) throw new FengYuError('browser_bad_tab', { index, count: s.pages.length });
        if (a.action === 'select') {
          s.current = index;
          await tab.bringToFront().catch(() => {});
        } else await tab.close();
      }
      const tabs = await Promise.all(s.pages.map(async (p, i) => ({ index: i, url: p.url(), title: await p.title().catch(() => ''), current: i === s.current })));
      return { tabs };
    },
    noSession: async () => ({ tabs: [] }),
  },
  {
    name: 'browser_close',
    description: 'Close this run\'s browser session: every tab, cookie and stored value is discarded.',
    effect: 'read',
    inputSchema: obj({}),
    args: Empty,
    idempotent: true,
    run: async () => ({ closed: true }),
    noSession: async () => ({ closed: false }),
  },
  {
    name: 'browser_extract_table',
    description:
      'Read an HTML table of the current page as rows: `ref` (a table, or an element inside one, from browser_snapshot) or `index` (0 = the first table, the default). Returns the column names and one object per row, ready for excel_write_rows.',
    effect: 'read',
    inputSchema: obj({ ref: refProp, index: { type: 'integer', minimum: 0, maximum: 1000 }, maxRows: { type: 'integer', minimum: 1, maximum: 5000, default: 1000 } }),
    args: Table,
    idempotent: true,
    run: async (s, a: z.infer<typeof Table>) => {
      const p = page(s);
      const where = a.ref !== undefined ? `ref ${a.ref}` : `table #${a.index ?? 0}`;
      const handle = a.ref !== undefined ? await (await target(p, a.ref)).elementHandle({ timeout: ACTION_TIMEOUT_MS }) : null;
      const result: TableResult | null = await p.evaluate(extractTableInPage, { element: handle, index: a.index ?? 0, maxRows: a.maxRows ?? 1000 });
      await handle?.dispose();
      if (!result) throw new FengYuError('browser_no_table', { where });
      return { url: p.url(), ...result };
    },
  },
];

export const BROWSER_TOOL_NAMES: readonly string[] = SPECS.map((s) => s.name);

/** Runs `fn` after the session's earlier calls (one action at a time per session), honouring the signal. */
function serialized<T>(s: BrowserSession, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  const run = s.queue.then(() => {
    if (signal.aborted) throw signal.reason;
    return fn();
  });
  s.queue = run.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new FengYuError('tool_cancelled', { name: 'browser' }));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function sessionKey(ctx: ToolContext): SessionKey {
  return { owner: ctx.owner, ...(ctx.runId ? { runId: ctx.runId } : {}), ...(ctx.conversationId ? { conversationId: ctx.conversationId } : {}) };
}

export function createBrowserTools(deps: BrowserToolDeps): Tool[] {
  return SPECS.map((spec) => {
    const revision = stableHash({ inputSchema: spec.inputSchema, effect: spec.effect });
    return {
      name: spec.name,
      description: spec.description,
      inputSchema: spec.inputSchema,
      effect: spec.effect,
      source: 'builtin',
      id: `builtin:${spec.name}`,
      schemaRevision: revision,
      idempotent: spec.idempotent === true,
      ...(FLOW_NODES[spec.name] ? { flowNode: FLOW_NODES[spec.name] } : {}),
      get available() {
        return deps.available();
      },
      async invoke(raw: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
        const args = parse(spec.name, spec.args, raw);
        const key = sessionKey(ctx);
        if (spec.name === 'browser_close') {
          return { closed: await deps.sessions.close(key) };
        }
        let session: BrowserSession | undefined;
        if (spec.opens) {
          const init: SessionInit = {
            policy: await deps.policy(ctx.owner),
            ...(deps.navigationGate ? { navigationGate: deps.navigationGate(ctx.owner, ctx) } : {}),
          };
          session = await deps.sessions.open(key, init);
        } else {
          session = deps.sessions.acquire(key);
        }
        if (!session) {
          if (spec.noSession) return spec.noSession(ctx);
          throw new FengYuError('browser_no_page');
        }
        const s = session;
        try {
          if (!spec.opens) s.policy = await deps.policy(ctx.owner);
          return await serialized(s, ctx.signal, () => spec.run(s, args as never, ctx, deps));
        } finally {
          deps.sessions.release(key);
        }
      },
    } satisfies Tool;
  });
}
