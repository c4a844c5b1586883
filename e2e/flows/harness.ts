import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { auto, startTestHost, type TestHost } from '../../packages/host/test/support/host';
import { ROOT } from './global-setup';
import { settle } from '../support/settle';

/** One real host and one chromium (fresh profile) for a test file. */

/** Screenshots land in docs/screenshots only when asked (UPDATE_SCREENSHOTS=1); otherwise in a git-ignored folder. */
export const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs/screenshots') : join(ROOT, 'e2e/.artifacts/screenshots');

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface FlowsE2E {
  t: TestHost;
  context: BrowserContext;
  page: Page;
  /** A UI address with the token in the hash, as the host prints it. */
  url(path: string): string;
  shot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startFlowsE2E(): Promise<FlowsE2E> {
  const t = await startTestHost({
    uiDir: join(ROOT, 'packages/ui/dist'),
    bundledPluginDirs: [join(ROOT, 'packages/plugins/excel/dist'), join(ROOT, 'packages/plugins/email/dist')],
  });
  const profile = mkdtempSync(join(tmpdir(), 'fengyu-e2e-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ARGS,
    viewport: { width: 1920, height: 1080 },
    locale: 'en-US',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']).catch(() => {});
  const page = context.pages()[0] ?? (await context.newPage());
  mkdirSync(SHOTS, { recursive: true });
  return {
    t,
    context,
    page,
    url: (path) => `${t.host.url}${path}#token=${encodeURIComponent(t.host.token)}`,
    async shot(p, name) {
      await settle(p);
      await p.screenshot({ path: join(SHOTS, `${name}.png`), animations: 'disabled' });
    },
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
      await t.close();
    },
  };
}

/** Saves the E-mail plugin's recipient group `managers`, as a user would have, through a run of its tool. */
export async function saveRecipientGroup(e: FlowsE2E, recipients: string[]): Promise<void> {
  const setup = await e.t.api('POST', '/api/agent/run', { goal: 'setup', workflow: { steps: [{ id: 'tag', tool: 'email_tag_save', arguments: { name: 'managers', recipients } }] }, config: auto });
  if (setup.status !== 200) throw new Error(`recipient group not saved: ${JSON.stringify(setup.body)}`);
  await e.t.stream(setup.body.runId);
}
