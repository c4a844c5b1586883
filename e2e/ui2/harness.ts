import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { startTestHost, type TestHost } from '../../packages/host/test/support/host';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../../packages/host/test/support/scripted-openai';
import { buildUi, ROOT } from './build-ui';
import { settle } from '../support/settle';

/** One real host + scripted model + chromium for a test file. */
export interface Ui2 {
  t: TestHost;
  llm: ScriptedOpenAI;
  browser: Browser;
  page: Page;
  /** Opens a UI path with the token in the address (as the host prints it). */
  open(path: string): Promise<void>;
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** Screenshots land in docs/screenshots only when asked (UPDATE_SCREENSHOTS=1); otherwise in a git-ignored folder. */
export const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs/screenshots') : join(ROOT, 'e2e/.artifacts/screenshots');

export async function startUi2(opts: { backend?: boolean; plugins?: boolean; env?: Record<string, string | undefined> } = {}): Promise<Ui2> {
  const uiDir = (inject('ui2Dist') as string | undefined) ?? buildUi();
  const llm = await startScriptedOpenAI();
  // `plugins`: the official Excel and E-mail plugins (built by `npm run build`) are bundled
  const t = await startTestHost({ uiDir, ...(opts.env ? { env: opts.env } : {}), ...(opts.plugins ? { bundledPluginDirs: [join(ROOT, 'packages/plugins/excel/dist'), join(ROOT, 'packages/plugins/email/dist')] } : {}) });
  if (opts.backend !== false) {
    const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted', apiKey: 'sk-e2e-secret' }], defaultBackend: 'local' });
    if (res.status !== 200) throw new Error(`backend settings: ${JSON.stringify(res.body)}`);
  }
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  mkdirSync(SHOTS, { recursive: true });
  return {
    t,
    llm,
    browser,
    page,
    async open(path) {
      await page.goto(`${t.host.url}${path}#token=${encodeURIComponent(t.host.token)}`);
    },
    async shot(name) {
      await settle(page);
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false, animations: 'disabled' });
    },
    async close() {
      await browser.close().catch(() => {});
      await t.close().catch(() => {});
      await llm.close().catch(() => {});
    },
  };
}

/** A model turn that drafts `steps` as a fenced JSON plan, streamed in small chunks. */
export function planTurn(steps: unknown[]) {
  const text = `Here is the plan.\n\`\`\`json\n${JSON.stringify({ steps }, null, 1)}\n\`\`\``;
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += 12) chunks.push(text.slice(i, i + 12));
  return { text: chunks, chunkDelayMs: 15 };
}

/**
 * Latin-script words left in the rendered page once product names, tool names, code, ids and user
 * data are taken out: what a zh-CN user would still see in English.
 */
export async function englishLeft(page: Page, allow: readonly string[] = [], extraDrop = ''): Promise<string[]> {
  const words: string[] = await page.evaluate((extra) => {
    const root = document.body.cloneNode(true) as HTMLElement;
    const drop = (extra ? `${extra}, ` : '') + '.mono, pre, code, textarea, input, script, style, [data-user], .goal, .bubble, .conv-title, .desc, [data-testid="plugin-card"] h3, .agent-run h1, .run-detail h1, [data-testid="mcp-server"] strong, .vue-flow__attribution';
    // a select's text is its options' texts run together: keep each option as its own words
    for (const sel of Array.from(root.querySelectorAll('select'))) sel.replaceWith(document.createTextNode(` ${Array.from(sel.querySelectorAll('option')).map((o) => o.textContent).join(' ')} `));
    for (const el of Array.from(root.querySelectorAll(drop))) el.remove();
    const text = root.innerText || root.textContent || '';
    return text.match(/[A-Za-z][A-Za-z'-]+/g) ?? [];
  }, extraDrop);
  const ok = new Set(['FengYu', 'OpenAI', 'Anthropic', 'MCP', 'HTTP', 'API', 'JSON', 'SearXNG', 'URL', 'Shell', 'Webhook', 'AI', 'English', 'EN', 'Enter', 'Shift', 'fyp', 'ms', 'min', 'Command', 'Tool', 'Effect', 'Mcp', 'WebFetch', 'Bash', 'git', 'status', 'npm', 'run', 'email', 'read', 'github', 'domain', 'example', 'com', 'web_fetch', 'web_search', 'web', 'fetch', 'search', 'searxng', 'v', ...allow].map((w) => w.toLowerCase()));
  return [...new Set(words)].filter((w) => !ok.has(w.toLowerCase()));
}
