import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { SHOTS, startUi2, type Ui2 } from './harness';

/**
 * The Inbox page in real Chromium at 1280×800: a background task whose run reaches a step gate
 * waits there (the navigation counts it, live); it is answered on the page, in English and in
 * Simplified Chinese, and the task goes on. An input step's form is filled in and submitted there;
 * a field the host refuses shows its message beside it.
 */
let u: Ui2;
let page: Page;
let writer: string;

async function waitingTask(): Promise<{ id: string; runId: string }> {
  const res = await u.t.api('POST', '/api/agent/tasks', { workflowId: writer, permissionMode: 'ask' });
  if (res.status !== 202) throw new Error(JSON.stringify(res.body));
  let snap = res.body;
  // a gate opened as the run begins (an input first) may park the task before it records its run's id
  await expect.poll(async () => ((snap = (await u.t.api('GET', `/api/agent/tasks/${res.body.id}`)).body).runId ? snap.state : 'starting'), { timeout: 20_000 }).toBe('waiting');
  return { id: snap.id, runId: snap.runId };
}

async function open(path: string) {
  await page.goto(`${u.t.host.url}${path}#token=${encodeURIComponent(u.t.host.token)}`);
}

async function shot(name: string) {
  await settle(page);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false, animations: 'disabled' });
}

beforeAll(async () => {
  u = await startUi2({ backend: false });
  page = await u.browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  const made = await u.t.api('POST', '/api/workflows', { name: 'Note writer', inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'note', title: 'Write the note', tool: 'write_note', arguments: { text: 'x' } }] } });
  await u.t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  writer = made.body.id;
});

afterAll(async () => {
  await u?.close();
});

describe('inbox page', () => {
  it('shows a waiting task with its run, workflow, trigger, age and expiry, and approves it (en)', async () => {
    await open('/inbox');
    await page.getByTestId('inbox-empty').waitFor();
    const task = await waitingTask();
    // the stream brings it in, and the navigation counts it
    const item = page.getByTestId('inbox-item');
    await item.waitFor();
    expect(await page.getByTestId('inbox-count').innerText()).toBe('1');
    expect(await item.locator('h2').innerText()).toBe('Write the note');
    expect(await page.getByTestId('inbox-trigger').innerText()).toBe('Background task');
    expect(await item.innerText()).toContain('Note writer');
    expect(await item.innerText()).toContain('write_note');
    await shot('inbox-en');
    await page.getByTestId('inbox-approve').click();
    await page.getByTestId('inbox-empty').waitFor();
    await expect.poll(() => page.getByTestId('inbox-count').count()).toBe(0);
    const done = (await u.t.api('GET', `/api/agent/tasks/${task.id}/output?timeoutMs=20000`)).body;
    expect(done.state).toBe('completed');
  });

  it('rejects with a reason in Simplified Chinese; the task fails with it', async () => {
    await page.getByTestId('locale').selectOption('zh-CN');
    const task = await waitingTask();
    await page.getByTestId('inbox-item').waitFor();
    expect(await page.locator('h1').innerText()).toBe('收件箱');
    expect(await page.getByTestId('inbox-trigger').innerText()).toBe('后台任务');
    await page.getByTestId('inbox-reason').fill('今天不写');
    await shot('inbox-zh');
    await page.getByTestId('inbox-reject').click();
    await page.getByTestId('inbox-empty').waitFor();
    const done = (await u.t.api('GET', `/api/agent/tasks/${task.id}/output?timeoutMs=20000`)).body;
    expect(done.state).toBe('failed');
    const run = (await u.t.api('GET', `/api/agent/runs/${task.runId}`)).body;
    expect(JSON.stringify(run.executions)).toContain('今天不写');
  });

  it('answers an input form (zh-CN, then en): a refused field shows its message beside it; the values reach the run', async () => {
    const form = { type: 'object', required: ['discount'], properties: { discount: { type: 'number', title: 'Discount (%)' }, note: { type: 'string', title: 'Note', maxLength: 5 }, region: { type: 'string', enum: ['north', 'south'] } } };
    const made = await u.t.api('POST', '/api/workflows', { name: 'Discount', inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'ask', kind: 'input', title: 'Approve the discount', form }, { id: 'say', tool: 'echo', arguments: { value: '{{node.ask.result.discount}}' }, dependsOn: ['ask'] }] } });
    await u.t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
    writer = made.body.id;
    for (const [locale, note] of [['zh-CN', '太长的备注文字'], ['en', 'far too long']] as const) {
      await page.getByTestId('locale').selectOption(locale);
      const task = await waitingTask();
      const item = page.locator('[data-testid="inbox-item"][data-kind="input"]');
      await item.waitFor();
      await page.getByTestId('form-discount').fill('15');
      await page.getByTestId('form-note').fill(note);
      await page.getByTestId('form-region').selectOption('south');
      await page.getByTestId('inbox-submit').click();
      const error = page.getByTestId('form-error-note');
      await error.waitFor();
      expect(await error.innerText()).toBe(locale === 'en' ? 'Field "note" must be at most 5 characters.' : '字段“note”最多 5 个字符。');
      await shot(`inbox-input-${locale === 'en' ? 'en' : 'zh'}`);
      await page.getByTestId('form-note').fill('vip');
      await page.getByTestId('inbox-submit').click();
      await page.getByTestId('inbox-empty').waitFor();
      const done = (await u.t.api('GET', `/api/agent/tasks/${task.id}/output?timeoutMs=20000`)).body;
      expect(done.state).toBe('completed');
      const run = (await u.t.api('GET', `/api/agent/runs/${task.runId}`)).body;
      expect(run.executions.find((e: { stepId: string }) => e.stepId === 'ask').result).toEqual({ discount: 15, note: 'vip', region: 'south' });
    }
  });
});
