import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { englishLeft, startUi2, type Ui2 } from './harness';

/** Settings' memory and language switches; Chat's published-flows list and attached folders. */
let u: Ui2;
let work: string;
beforeAll(async () => {
  u = await startUi2();
  work = mkdtempSync(join(tmpdir(), 'fengyu-ui2-extra-'));
});
afterAll(async () => {
  await u?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('settings switches', () => {
  it('saves the memory switch and keeps it after a reload', async () => {
    const { page, t } = u;
    await u.open('/settings');
    const sw = page.getByTestId('memory-switch');
    await sw.waitFor();
    expect(await sw.isChecked()).toBe(false);
    await sw.check();
    await expect.poll(async () => (await t.api('GET', '/api/settings')).body.memory?.enabled, { timeout: 10_000 }).toBe(true);
    await page.reload();
    await page.getByTestId('memory-switch').waitFor();
    await expect.poll(() => page.getByTestId('memory-switch').isChecked()).toBe(true);
    await page.getByTestId('memory-switch').uncheck();
    await expect.poll(async () => (await t.api('GET', '/api/settings')).body.memory?.enabled, { timeout: 10_000 }).toBe(false);
  });

  it('switches the language from Settings: the page, the html lang and the saved setting follow', async () => {
    const { page, t } = u;
    await u.open('/settings');
    const select = page.getByTestId('settings-locale');
    await select.waitFor();
    const navSettings = page.locator('[data-nav="settings"]');
    const english = await navSettings.innerText();
    await select.selectOption('zh-CN');
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('zh-CN');
    await expect.poll(() => navSettings.innerText()).not.toBe(english);
    expect(await navSettings.innerText()).not.toMatch(/[A-Za-z]/);
    await expect.poll(() => page.getByTestId('locale').inputValue()).toBe('zh-CN'); // the shell's switch agrees
    await expect.poll(async () => (await t.api('GET', '/api/settings')).body.locale, { timeout: 10_000 }).toBe('zh-CN');
    await page.reload();
    await page.getByTestId('settings-locale').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('zh-CN');
    await page.getByTestId('settings-locale').selectOption('en');
    await expect.poll(() => navSettings.innerText()).toBe(english);
    await expect.poll(async () => (await t.api('GET', '/api/settings')).body.locale, { timeout: 10_000 }).toBe('en');
  });
});

describe('Settings → Secrets', () => {
  it.each(['en', 'zh-CN'] as const)('adds, replaces and deletes a secret; "used by" names the workflow; the value is never shown (%s)', async (locale) => {
    const { page, t } = u;
    const name = locale === 'en' ? 'MAIL_PASS_EN' : 'MAIL_PASS_ZH';
    const value = `first-${locale}-9f3k2-value`;
    const next = `second-${locale}-7q1x8-value`;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto('about:blank');
    await u.open('/settings');
    await page.getByTestId('locale').selectOption(locale);
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe(locale);
    const card = page.getByTestId('settings-secrets');
    await card.waitFor();
    expect(await card.locator('h2').innerText()).toBe(locale === 'en' ? 'Secrets' : '密钥');
    // a bad name is refused before anything is sent
    await page.getByTestId('secret-name').fill('1bad');
    await page.getByTestId('secret-value').fill(value);
    expect(await page.getByTestId('secret-add').isDisabled()).toBe(true);
    await page.getByTestId('secret-name').fill(name);
    await page.getByTestId('secret-add').click();
    const row = page.locator(`[data-testid="secret-row"][data-name="${name}"]`);
    await row.waitFor();
    expect(await page.getByTestId('secret-value').inputValue()).toBe('');
    expect(await page.content()).not.toContain(value);
    // a workflow referencing it is listed under "used by" (with a link to it)
    const wf = await t.api('POST', '/api/workflows', { name: `Mailer ${locale}`, inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'send', tool: 'execute_command', arguments: { command: `printf %s '{{secrets.${name}}}'` } }] } });
    expect(wf.status).toBe(200);
    await page.reload();
    await expect.poll(() => row.getByTestId('secret-used-by').innerText()).toBe(`Mailer ${locale}`);
    expect(await row.getByTestId('secret-used-by').locator('a').getAttribute('href')).toContain(`/flows/${wf.body.id}`);
    const before = (await t.api('GET', '/api/secrets')).body.items.find((i: { name: string }) => i.name === name);
    // replace: a new value typed in; the list never carries either value
    await row.getByTestId('secret-replace').click();
    await row.getByTestId('secret-replace-value').fill(next);
    await row.getByTestId('secret-replace-save').click();
    await row.getByTestId('secret-replace').waitFor();
    await expect.poll(async () => (await t.api('GET', '/api/secrets')).body.items.find((i: { name: string }) => i.name === name)?.updatedAt).not.toBe(before.updatedAt);
    const html = await page.content();
    expect(html).not.toContain(value);
    expect(html).not.toContain(next);
    expect(await row.getByTestId('secret-replace').innerText()).toBe(locale === 'en' ? 'Replace value' : '替换值');
    await u.shot(`settings-secrets-${locale}`);
    // delete: the confirmation names the workflow count; the row goes away
    const asked = new Promise<string>((resolve) => page.once('dialog', (d) => { resolve(d.message()); void d.accept(); }));
    await row.getByTestId('secret-delete').click();
    expect(await asked).toBe(locale === 'en' ? `Delete the secret ${name}? 1 workflow(s) use it and will not run until it is added again.` : `删除密钥 ${name}？有 1 个工作流在使用它，重新添加之前它们将无法运行。`);
    await row.waitFor({ state: 'detached' });
    expect((await t.api('GET', '/api/secrets')).body.items.map((i: { name: string }) => i.name)).not.toContain(name);
    await t.api('DELETE', `/api/workflows/${wf.body.id}`);
    await page.getByTestId('locale').selectOption('en');
  });
});

describe('tool call timeout', () => {
  it.each(['en', 'zh-CN'] as const)('sets backend.callTimeoutSeconds from Settings at 1280×800 and refuses a value outside 1–600 (%s)', async (locale) => {
    const { page, t } = u;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto('about:blank'); // a fresh load: the settings are read again
    await u.open('/settings');
    await page.getByTestId('locale').selectOption(locale);
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe(locale);
    const input = page.getByTestId('call-timeout');
    await input.waitFor();
    expect(await input.inputValue()).toBe('120');
    await input.fill('0');
    await page.getByTestId('call-timeout-save').click();
    await expect.poll(() => page.getByTestId('settings-general').getByRole('alert').textContent()).toBe(locale === 'en' ? 'Enter whole seconds from 1 to 600.' : '请输入 1 到 600 之间的整数秒。');
    expect((await t.api('GET', '/api/settings')).body.backend).toEqual({ callTimeoutSeconds: 120 });
    await input.fill('45');
    await page.getByTestId('call-timeout-save').click();
    await page.getByTestId('call-timeout-saved').waitFor();
    expect((await t.api('GET', '/api/settings')).body.backend).toEqual({ callTimeoutSeconds: 45 });
    await page.getByTestId('call-timeout').scrollIntoViewIfNeeded();
    await u.shot(`settings-call-timeout-${locale}`);
    await t.api('PATCH', '/api/settings', { backend: null });
    await page.getByTestId('locale').selectOption('en');
  });
});

describe('chat extras', () => {
  it('lists published flows as tools, not drafts', async () => {
    const { page, t } = u;
    const plan = { steps: [{ id: 'a', tool: 'echo', arguments: { text: 'x' } }] };
    const pub = (await t.api('POST', '/api/workflows', { name: 'Published echo', plan })).body;
    expect((await t.api('POST', `/api/workflows/${pub.id}/publish`, { revision: pub.revision })).status).toBe(200);
    await t.api('POST', '/api/workflows', { name: 'Draft only', plan });
    await u.open('/chat');
    const flows = page.getByTestId('chat-flows');
    await flows.waitFor({ timeout: 20_000 });
    const text = await flows.innerText();
    expect(text).toContain('Published echo');
    expect(text).not.toContain('Draft only');
    expect(await flows.locator(`[title="run_workflow_${pub.id}"]`).count()).toBe(1);
  });

  it('attaches an uploaded folder and a local folder path, and sends them with the message', async () => {
    const { page, llm } = u;
    const dir = join(work, 'reports');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), 'alpha');
    writeFileSync(join(dir, 'b.txt'), 'beta');
    llm.push({ text: 'Got the folder.' });
    await u.open('/chat');
    await page.getByTestId('chat-composer').waitFor();
    await page.locator('input[type="file"][webkitdirectory]').setInputFiles(dir);
    const chips = page.getByTestId('chat-attachment');
    await expect.poll(() => chips.count(), { timeout: 10_000 }).toBe(1);
    expect(await chips.first().innerText()).toContain('reports');
    expect(await chips.first().innerText()).toContain('2');
    const path = page.locator('input.path');
    await path.fill(work);
    await path.press('Enter');
    await expect.poll(() => chips.count()).toBe(2);
    const before = llm.requests.length;
    await page.getByTestId('chat-input').fill('Summarise what I attached');
    await page.getByTestId('chat-input').press('Enter');
    await expect.poll(() => page.locator('[data-testid="chat-assistant"][data-streaming="false"]').last().innerText(), { timeout: 20_000 }).toContain('Got the folder');
    expect(await chips.count()).toBe(0);
    expect(await page.getByTestId('chat-user').last().innerText()).toContain('reports');
    // the model is told about both: the uploaded folder's files and the local directory
    const system = String((llm.requests[before]?.messages?.[0] as { content?: unknown } | undefined)?.content ?? '');
    expect(system).toMatch(/reports: file.*a\.txt/);
    expect(system).toMatch(/reports: file.*b\.txt/);
    expect(system).toContain(`directory, read, path "${work}"`);
    // and the published flow (previous test) is one of its tools
    expect(JSON.stringify(llm.requests[before]?.tools ?? [])).toContain('"run_workflow_');
  });
});

describe('memory page', () => {
  it('lists, searches and deletes memories after a confirmation, in en and zh-CN at 1280×800', async () => {
    const { page, t, llm } = u;
    await page.setViewportSize({ width: 1280, height: 800 });
    await t.api('PATCH', '/api/settings', { memory: { enabled: true } });
    for (const content of ['Invoices are split by the Region column', 'Reports go to finance every Monday', '发票按地区拆分']) {
      llm.push({ text: 'summary' });
      const r = await t.api('POST', '/api/agent/run', { config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 'r', tool: 'memory_remember', arguments: { content } }] } });
      expect((await t.stream(r.body.runId)).at(-1)?.type).toBe('complete');
    }
    await t.api('PATCH', '/api/settings', { memory: { enabled: false } });
    await u.open('/memory');
    const rows = page.getByTestId('memory-row');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(3);
    expect(await rows.first().innerText()).toContain('发票按地区拆分'); // newest first
    await page.getByTestId('memory-off').waitFor(); // memory is off, the list is still there
    await page.getByTestId('memory-search').fill('REGION');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().innerText()).toContain('Invoices are split by the Region column');
    await u.shot('ui2-memory-en');
    // cancelling the confirmation keeps it; confirming deletes it on the host
    await page.getByTestId('memory-delete').click();
    await page.getByTestId('confirm-cancel').click();
    expect(await rows.count()).toBe(1);
    await page.getByTestId('memory-delete').click();
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('memory-empty').waitFor();
    expect((await t.api('GET', '/api/memory')).body.items.map((m: { text: string }) => m.text)).toEqual(['发票按地区拆分', 'Reports go to finance every Monday']);

    await page.getByTestId('locale').selectOption('zh-CN');
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('zh-CN');
    await page.getByTestId('memory-search').fill('');
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByTestId('memory-delete').first().click();
    await page.getByTestId('confirm-dialog').waitFor();
    expect(await englishLeft(page, [], '.text')).toEqual([]);
    await u.shot('ui2-memory-zh');
    await page.getByTestId('confirm-ok').click();
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByTestId('locale').selectOption('en');
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});
