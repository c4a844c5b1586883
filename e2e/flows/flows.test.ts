import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoiceRows, writeInvoices } from '../../packages/plugins/excel/test/workbooks';
import { type FlowsE2E, saveRecipientGroup, startFlowsE2E } from './harness';

/**
 * The Flows view end to end in a real browser against a real host: the Excel-split template from
 * the gallery, a reference edited by drag, undo/redo, save, a 409 from a second tab, a run with a
 * file upload and live pickers, plan and step approval, live badges, and a reopened run's result.
 */

let e: FlowsE2E;
let work: string;
let flowId = '';
let runId = '';
const FILES_REF = '{{node.execute.result.files}}';

beforeAll(async () => {
  e = await startFlowsE2E();
  work = mkdtempSync(join(tmpdir(), 'fengyu-e2e-work-'));
  await saveRecipientGroup(e, ['north@example.com', 'lead@example.com']);
}, 240_000);

afterAll(async () => {
  await e?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('Flows library, builder and run panel', () => {
  it('asks for the token when the host refuses the one in the address', async () => {
    const { page } = e;
    await page.goto(`${e.t.host.url}/flows#token=not-the-token`);
    const dialog = page.getByTestId('token-dialog');
    await dialog.waitFor();
    expect(page.url()).not.toContain('not-the-token');
    await dialog.locator('input').fill(e.t.host.token);
    await dialog.locator('button[type="submit"]').click();
    await expect.poll(() => dialog.count()).toBe(0);
    await page.getByTestId('flows-library').waitFor();
    await expect.poll(() => page.evaluate(() => localStorage.getItem('fengyu.token'))).toBe(e.t.host.token);
  });

  it('creates the Excel-split flow from the template gallery', async () => {
    const { page } = e;
    await page.goto(e.url('/'));
    await page.getByTestId('flows-library').waitFor();
    expect(page.url()).not.toContain('token='); // the token is moved to local storage
    const card = page.locator('[data-template-id="excel-split-email"]');
    await card.waitFor();
    await e.shot(page, 'flows-library-empty');
    await card.getByTestId('use-template').click();
    await page.waitForURL(/\/flows\/[^/]+$/);
    flowId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() as string);
    for (const id of ['start', 'config', 'execute', 'send', 'confirm']) await page.locator(`.fy-node[data-node-id="${id}"]`).waitFor();
    await expect.poll(() => page.locator('.fy-edge').count()).toBe(4);
    await page.getByTestId('diagnostics').waitFor();
    expect(await page.getByTestId('diagnostics').locator('li').count()).toBe(0);
  });

  it('edits a reference by drag, with undo and redo', async () => {
    const { page } = e;
    await page.locator('.fy-node[data-node-id="send"] .fy-label').click();
    const field = page.locator('[data-arg="files"]');
    await field.waitFor();
    const current = field.getByTestId('ref-current');
    await expect.poll(() => current.locator('code').textContent()).toBe(FILES_REF);
    await field.getByTestId('ref-clear').click();
    await expect.poll(() => current.locator('code').count()).toBe(0);
    const row = field.locator(`[data-ref="${FILES_REF}"]`);
    await row.scrollIntoViewIfNeeded();
    await row.dragTo(current);
    await expect.poll(() => current.locator('code').textContent()).toBe(FILES_REF);
    await page.getByTestId('undo').click();
    await expect.poll(() => current.locator('code').count()).toBe(0);
    await page.getByTestId('redo').click();
    await expect.poll(() => current.locator('code').textContent()).toBe(FILES_REF);
    await page.keyboard.press('Escape');
    await e.shot(page, 'builder');
  });

  it('adds a node by drag from the palette, deletes it with the Delete key, and brings it back with Ctrl+Z', async () => {
    const { page } = e;
    const before = await page.locator('.fy-node[data-node-id]').count();
    await page.locator('[data-palette-item="excel_analyze"]').dragTo(page.getByTestId('canvas'), { targetPosition: { x: 500, y: 650 } });
    const added = page.locator('.fy-node[data-node-id="excel_analyze"]');
    await added.waitFor();
    expect(await page.locator('.fy-node[data-node-id]').count()).toBe(before + 1);
    await page.locator('body').click({ position: { x: 5, y: 5 } }).catch(() => {});
    await added.locator('.fy-label').click();
    await page.keyboard.press('Delete');
    await expect.poll(() => added.count()).toBe(0);
    await page.keyboard.press('Control+z');
    await added.waitFor();
    await page.keyboard.press('Control+z'); // and undo the add itself
    await expect.poll(() => added.count()).toBe(0);
    await page.keyboard.press('Control+Shift+z');
    await added.waitFor();
    await page.keyboard.press('Control+z');
    await expect.poll(() => added.count()).toBe(0);
  });

  it('saves, then reports a 409 when a second tab saved first', async () => {
    const { page } = e;
    const revision = await page.getByTestId('revision').textContent();
    await page.getByTestId('toolbar-name').fill('Regional invoices');
    await page.getByTestId('toolbar-name').press('Tab');
    await page.getByTestId('unsaved').waitFor();
    await page.getByTestId('save').click();
    await expect.poll(() => page.getByTestId('revision').textContent()).not.toBe(revision);
    await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);

    const second = await e.context.newPage();
    await second.goto(e.url(`/flows/${encodeURIComponent(flowId)}`));
    await second.locator('.fy-node[data-node-id="confirm"]').waitFor();
    await second.getByTestId('revision').waitFor();
    const secondRevision = await second.getByTestId('revision').textContent();
    // the rename is the tab's own before it saves: typed once, it survives the tab's late loads
    await second.getByTestId('toolbar-name').fill('Changed in tab two');
    await second.getByTestId('toolbar-name').press('Tab');
    await second.getByTestId('unsaved').waitFor();
    await second.getByTestId('save').click();
    await expect.poll(() => second.getByTestId('revision').textContent()).not.toBe(secondRevision);
    await expect.poll(() => second.getByTestId('unsaved').count()).toBe(0);
    await second.close();

    await page.getByTestId('toolbar-name').fill('My change');
    await page.getByTestId('toolbar-name').press('Tab');
    await page.getByTestId('save').click();
    await page.getByTestId('conflict').waitFor();
    await page.getByTestId('conflict-reload').click();
    await expect.poll(() => page.getByTestId('conflict').count()).toBe(0);
    await expect.poll(() => page.getByTestId('toolbar-name').inputValue()).toBe('Changed in tab two');
  });

  it('runs with an uploaded workbook, approves the gates and shows live badges', async () => {
    const { page } = e;
    const book = join(work, 'invoices.xlsx');
    await writeInvoices(book, invoiceRows(24));
    await page.getByTestId('run').click();
    const dialog = page.getByTestId('run-dialog');
    await dialog.waitFor();
    await dialog.getByTestId('run-start').click();
    await expect.poll(() => dialog.getByTestId('missing-inputs').textContent()).toContain('Workbook');
    await dialog.getByTestId('file-workbook').setInputFiles(book);
    await dialog.getByTestId('uploaded').waitFor();
    await expect.poll(() => dialog.getByTestId('enum-recipients').locator('option[value="managers"]').count()).toBe(1);
    await dialog.getByTestId('enum-recipients').selectOption('managers');
    await expect.poll(() => dialog.getByTestId('enum-account').inputValue()).toBe('local-outbox');
    await dialog.getByTestId('permission-mode').selectOption('approve-for-me');
    await dialog.getByTestId('run-start').click();
    await page.waitForURL(/\?run=/);
    runId = new URL(page.url()).searchParams.get('run') as string;
    const panel = page.getByTestId('run-panel');
    await panel.getByTestId('approve-plan').click({ timeout: 30_000 });
    await panel.getByTestId('step-gate').waitFor({ timeout: 60_000 });
    // the gate names the step by its title (step `confirm`), and previews who gets what
    const gateText = await panel.getByTestId('step-gate').textContent();
    expect(gateText).toContain('“Send the e-mails” needs your approval');
    expect(gateText).toContain('invoices-North.xlsx');
    await expect.poll(() => page.locator('.fy-node[data-node-id="execute"]').getAttribute('data-badge'), { timeout: 30_000 }).toBe('done');
    // The gated step waits for a person: its card and its run-panel row say so, not "running".
    await expect.poll(() => page.locator('.fy-node[data-node-id="confirm"]').getAttribute('data-badge')).toBe('awaiting');
    expect(await panel.locator('[data-step="confirm"]').getAttribute('data-status')).toBe('awaiting_approval');
    await e.shot(page, 'run-panel-gate');
    await panel.getByTestId('approve-step').click();
    await expect.poll(() => panel.getByTestId('run-status').getAttribute('data-status'), { timeout: 60_000 }).toBe('completed');
    for (const id of ['config', 'execute', 'send', 'confirm']) {
      await expect.poll(() => page.locator(`.fy-node[data-node-id="${id}"]`).getAttribute('data-badge')).toBe('done');
    }
    await panel.locator('[data-step="execute"]').getByTestId('result-toggle').click();
    await e.shot(page, 'run-panel');
  });

  it('reopens the run and reads a step result', async () => {
    const page = await e.context.newPage();
    await page.goto(e.url(`/flows/${encodeURIComponent(flowId)}?run=${encodeURIComponent(runId)}`));
    const panel = page.getByTestId('run-panel');
    await expect.poll(() => panel.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
    const step = panel.locator('[data-step="execute"]');
    await step.getByTestId('result-toggle').click();
    await expect.poll(() => step.getByTestId('step-result').textContent()).toMatch(/\.xlsx/);
    // The same page in Simplified Chinese (every string translated; CJK fonts from fonts-noto-cjk).
    await page.getByTestId('locale').selectOption('zh-CN');
    await expect.poll(() => page.getByTestId('tab-config').textContent()).toBe('配置');
    await page.locator('.fy-node[data-node-id="confirm"] .fy-label').click();
    await page.getByTestId('tab-config').click();
    await e.shot(page, 'builder-zh');
    await page.getByTestId('locale').selectOption('en');
    await page.goto(e.url('/flows'));
    await page.locator(`[data-flow-id="${flowId}"]`).waitFor();
    await expect.poll(() => page.locator(`[data-flow-id="${flowId}"]`).getByTestId('last-run').textContent()).toContain('Completed');
    await e.shot(page, 'flows-library');
    // Save a copy, then delete the copy (with confirmation).
    await page.locator(`[data-flow-id="${flowId}"]`).getByTestId('duplicate').click();
    await expect.poll(() => page.locator('[data-flow-id]').count()).toBe(2);
    const copy = page.locator(`[data-flow-id]:not([data-flow-id="${flowId}"])`);
    await copy.getByTestId('delete').click();
    await page.getByTestId('confirm-dialog').waitFor();
    await page.getByTestId('confirm-cancel').click();
    expect(await page.locator('[data-flow-id]').count()).toBe(2);
    await copy.getByTestId('delete').click();
    await page.getByTestId('confirm-ok').click();
    await expect.poll(() => page.locator('[data-flow-id]').count()).toBe(1);
    expect((await e.t.api('GET', '/api/workflows')).body.workflows).toHaveLength(1);
    await page.close();
  });
});
