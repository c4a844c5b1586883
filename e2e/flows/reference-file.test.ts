import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { invoiceRows, writeInvoices } from '../../packages/plugins/excel/test/workbooks';
import { type FlowsE2E, startFlowsE2E } from './harness';

/**
 * Reference mode for a file-typed argument: the picker offers the Start node's file inputs in
 * the form the validator accepts (`@file:<name>`), so choosing one saves cleanly; an expression
 * cannot embed a file input, so the expression picker does not offer it. A column argument
 * declared with the "workbook analyze" widget is filled from a sample workbook's columns.
 */

let e: FlowsE2E;
let flowId = '';

beforeAll(async () => {
  e = await startFlowsE2E();
  const created = await e.t.api('POST', '/api/workflows', {
    name: 'Analyze one workbook',
    inputSchema: {
      type: 'object',
      properties: {
        workbook: { type: 'string', format: 'fengyu-file', title: 'Workbook' },
        output: { type: 'string', format: 'fengyu-directory', 'x-fengyu-auto': 'shared-directory', title: 'Output folder' },
        region: { type: 'string', title: 'Region' },
      },
    },
    plan: { steps: [{ id: 'analyze', title: 'Analyze', tool: 'excel_analyze', arguments: { filePath: '@file:workbook' } }, { id: 'filter', title: 'Filter', tool: 'excel_filter', arguments: { filePath: '@file:workbook', outputDirectory: '@file:output', filters: [{ column: 'Region', op: 'eq', value: '{{inputs.region}}' }] }, dependsOn: ['analyze'] }] },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  flowId = created.body.id;
}, 240_000);

afterAll(async () => {
  await e?.close();
});

it('saves a file argument switched to Reference mode and filled from the picker', async () => {
  const { page, t } = e;
  await page.goto(e.url(`/flows/${encodeURIComponent(flowId)}`));
  await page.locator('.fy-node[data-node-id="filter"] .fy-label').click();
  for (const [arg, input] of [['filePath', 'workbook'], ['outputDirectory', 'output']] as const) {
    const field = page.locator(`[data-arg="${arg}"]`);
    await field.waitFor();
    await field.locator('[data-source="manual"]').click();
    await field.locator('[data-source="reference"]').click();
    const row = field.locator(`[data-ref="@file:${input}"] [data-testid="var-pick"]`);
    expect(await row.isEnabled()).toBe(true);
    await row.click();
    await expect.poll(() => field.getByTestId('ref-current').locator('code').textContent()).toBe(`@file:${input}`);
    // a file input is never offered as a {{inputs.…}} value, which the validator refuses
    expect(await field.locator(`[data-ref="{{inputs.${input}}}"]`).count()).toBe(0);
  }
  // an expression embeds text; a file input cannot be part of one, so it is shown but not pickable
  const region = page.locator('[data-arg="outputDirectory"]');
  await region.locator('[data-source="expression"]').click();
  await region.locator('details.insert summary').click();
  expect(await region.locator('details.insert [data-ref="@file:workbook"] [data-testid="var-pick"]').isDisabled()).toBe(true);
  expect(await region.locator('details.insert [data-ref="{{inputs.region}}"] [data-testid="var-pick"]').isEnabled()).toBe(true);
  await region.locator('[data-source="reference"]').click();
  await region.locator('[data-ref="@file:output"] [data-testid="var-pick"]').click();
  await page.getByTestId('save').click();
  await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);
  expect(await page.getByTestId('save-error').count()).toBe(0);
  const saved = (await t.api('GET', `/api/workflows/${encodeURIComponent(flowId)}`)).body;
  expect(saved.plan.steps.find((s: { id: string }) => s.id === 'filter').arguments).toMatchObject({ filePath: '@file:workbook', outputDirectory: '@file:output' });
});

it.each(['en', 'zh-CN'] as const)('fills a column argument from a sample workbook analyzed in the panel (the "workbook analyze" widget, %s)', async (locale) => {
  const { page, t } = e;
  await page.setViewportSize({ width: 1280, height: 800 });
  const work = mkdtempSync(join(tmpdir(), 'fengyu-wb-widget-'));
  try {
    const book = join(work, 'sample.xlsx');
    await writeInvoices(book, invoiceRows(8));
    await page.goto(e.url(`/flows/${encodeURIComponent(flowId)}`));
    await page.getByTestId('locale').selectOption(locale);
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe(locale);
    if (await page.getByTestId('palette-expand').count()) await page.getByTestId('palette-expand').click();
    await page.locator('[data-palette-item="excel_complex_config"]').click();
    const field = page.locator('[data-arg="splitColumn"]');
    await field.waitFor();
    const widget = field.locator('[data-widget="workbook-analyze"]');
    expect((await widget.locator('label.pick').textContent())?.trim()).toBe(locale === 'en' ? 'Analyze a sample workbook…' : '分析一个示例工作簿…');
    await widget.getByTestId('workbook-sample').setInputFiles(book);
    const choice = widget.getByTestId('workbook-choice');
    await choice.waitFor({ timeout: 60_000 });
    expect(await choice.locator('option').allTextContents()).toEqual([locale === 'en' ? 'Choose a column found in the sample…' : '选择示例中的列…', 'Invoice', 'Region', 'Customer', 'Amount', 'Date']);
    await choice.selectOption('Region');
    await expect.poll(() => field.locator('[data-widget="text"]').inputValue()).toBe('Region');
    // the analysis was a real run of the read tool, kept in the history
    const runs = (await t.api('GET', '/api/agent/runs?limit=5')).body.runs as Array<{ goal: string; status: string }>;
    expect(runs.some((r) => r.goal.includes('sample.xlsx') && r.status === 'completed')).toBe(true);
    await e.shot(page, `workbook-analyze-${locale}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
