import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoiceRows, writeInvoices } from '../../packages/plugins/excel/test/workbooks';
import { type FlowsE2E, saveRecipientGroup, startFlowsE2E } from './harness';

/**
 * A newcomer's first hour on a 1280×800 screen, in English and in Simplified Chinese: a fresh
 * install's Flows page, the headline template, a run with an uploaded workbook, the plan and send
 * approvals (the send gate by the step's title, with who gets what), the files the run wrote (one
 * downloaded) and its outbox messages, the result, the Start node's folder field, and the run in
 * history. With UPDATE_SCREENSHOTS=1 the screenshots land
 * in docs/screenshots/newcomer-<locale>-<n>-<step>.png (linked from docs/newcomer.md).
 */

let e: FlowsE2E;
let work: string;

beforeAll(async () => {
  e = await startFlowsE2E();
  work = mkdtempSync(join(tmpdir(), 'fengyu-newcomer-'));
  // a recipient group, as a user would have saved on the E-mail plugin
  await saveRecipientGroup(e, ['north@example.com']);
}, 240_000);

afterAll(async () => {
  await e?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function walk(locale: 'en' | 'zh-CN', texts: { template: string; tab: string; completed: RegExp; confirm: string; folder: string }) {
  const page: Page = await e.context.newPage();
  await page.setViewportSize({ width: 1280, height: 800 });
  const shot = (n: number, name: string) => e.shot(page, `newcomer-${locale}-${n}-${name}`);
  try {
    await page.goto(e.url('/flows'));
    await page.getByTestId('flows-library').waitFor();
    await page.getByTestId('locale').selectOption(locale);
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe(locale);
    const card = page.locator('[data-template-id="excel-split-email"]');
    await card.waitFor();
    expect(await card.locator('h3').textContent()).toBe(texts.template);
    await shot(1, 'library');

    await card.getByTestId('use-template').click();
    await page.waitForURL(/\/flows\/[^/?]+$/);
    for (const id of ['start', 'config', 'execute', 'send', 'confirm']) await page.locator(`.fy-node[data-node-id="${id}"]`).waitFor();
    expect(await page.getByTestId('tab-config').textContent()).toBe(texts.tab);
    const canvas = await page.getByTestId('canvas').boundingBox();
    expect(canvas?.width ?? 0).toBeGreaterThanOrEqual(0.6 * 1280);
    await shot(2, 'builder');

    const book = join(work, `invoices-${locale}.xlsx`);
    await writeInvoices(book, invoiceRows(24));
    await page.getByTestId('run').click();
    const dialog = page.getByTestId('run-dialog');
    await dialog.waitFor();
    await dialog.getByTestId('file-workbook').setInputFiles(book);
    await dialog.getByTestId('uploaded').waitFor();
    await expect.poll(() => dialog.getByTestId('enum-recipients').locator('option[value="managers"]').count()).toBe(1);
    await dialog.getByTestId('enum-recipients').selectOption('managers');
    await dialog.getByTestId('permission-mode').selectOption('approve-for-me');
    await shot(3, 'run-dialog');
    await dialog.getByTestId('run-start').click();
    await page.waitForURL(/\?run=/);

    const panel = page.getByTestId('run-panel');
    await panel.getByTestId('approve-plan').click({ timeout: 30_000 });
    await panel.getByTestId('step-gate').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator('.fy-node[data-node-id="confirm"]').getAttribute('data-badge')).toBe('awaiting');
    // the gate names the step by its title and shows who gets what before anything is sent
    const gateTitle = (await panel.getByTestId('step-gate-title').textContent()) ?? '';
    expect(gateTitle).toContain(texts.confirm);
    expect(gateTitle).not.toMatch(/\bconfirm\b/);
    const lines = panel.getByTestId('gate-mail-line');
    await expect.poll(() => lines.count()).toBeGreaterThan(0);
    expect(await lines.first().textContent()).toContain('north@example.com');
    await shot(4, 'approval');
    await panel.getByTestId('approve-step').click();
    await expect.poll(() => panel.getByTestId('run-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('completed');

    // where the output is: the split parts, downloadable, and who got which message
    const outputs = panel.getByTestId('run-outputs');
    await outputs.waitFor();
    expect(await outputs.getByTestId('run-output-file').count()).toBeGreaterThan(1);
    expect(await outputs.getByTestId('run-output-message').first().textContent()).toContain('north@example.com');
    await outputs.scrollIntoViewIfNeeded();
    await shot(4, 'outputs');
    const [download] = await Promise.all([page.waitForEvent('download'), outputs.getByTestId('run-output-file').first().locator('button').click()]);
    expect(download.suggestedFilename()).toMatch(/\.xlsx$/);
    // the outbox's .eml of a message opens from its line, through the same owner-scoped download
    const [eml] = await Promise.all([page.waitForEvent('download'), outputs.getByTestId('run-output-message-file').first().click()]);
    expect(eml.suggestedFilename()).toMatch(/\.eml$/);
    expect(readFileSync(await eml.path(), 'utf8')).toContain('north@example.com');

    await page.locator('.fy-node[data-node-id="execute"] .fy-label').click();
    await page.getByTestId('tab-config').click();
    await page.getByTestId('result-box').getByTestId('result-table').waitFor();
    await page.getByTestId('result-box').scrollIntoViewIfNeeded();
    await shot(5, 'result');

    // the Start node's output folder reads as the folder type
    await page.locator('.fy-node[data-node-id="start"] .fy-label').click();
    await page.getByTestId('tab-config').click();
    const folderField = page.getByTestId('start-editor').locator('[data-field="output"]');
    await folderField.waitFor();
    expect(await folderField.locator('select').inputValue()).toBe('folder');
    expect(await folderField.locator('select option:checked').textContent()).toBe(texts.folder);
    await folderField.getByTestId('folder-hint').waitFor();
    await folderField.scrollIntoViewIfNeeded();
    await shot(5, 'folder-field');

    await page.locator('[data-nav="runs"]').click();
    await page.getByTestId('runs-table').waitFor();
    await expect.poll(() => page.getByTestId('runs-table').innerText()).toMatch(texts.completed);
    await shot(6, 'history');
  } finally {
    await page.close();
  }
}

describe('a newcomer at 1280×800', () => {
  it('goes from a fresh install to a finished run in English', async () => {
    await walk('en', { template: 'Excel split → batch email', tab: 'Configure', completed: /Completed/, confirm: 'Send the e-mails', folder: 'Folder (created per run)' });
  });

  it('does the same in Simplified Chinese', async () => {
    await walk('zh-CN', { template: 'Excel 拆分 → 批量发送邮件', tab: '配置', completed: /已完成/, confirm: '发送邮件', folder: '文件夹（每次运行时创建）' });
  });
});
