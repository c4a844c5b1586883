import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FlowsE2E, startFlowsE2E } from './harness';

/**
 * Control flow drawn in the real builder at 1280×800: a Condition with a
 * case port and else, a For-each group with a step dragged into its body, saved, run against the
 * real host: the branch not taken is faded as skipped, the group counts its iterations and lists
 * per-item results. Then failure handling: a step set to On error = Branch with its error output wired, run with a
 * failing command, retried from the failed step. Last, a Human Input node: its form built field by field
 * with a live preview, saved, run, and answered on the run panel.
 */

let e: FlowsE2E;
let page: Page;
let flowId = '';
const PARTS = [{ name: 'North', rows: 1200 }, { name: 'South', rows: 30 }, { name: 'East', rows: 7 }];

type Box = { x: number; y: number; width: number; height: number };
const box = async (selector: string): Promise<Box> => {
  const b = await page.locator(selector).first().boundingBox();
  if (!b) throw new Error(`${selector} is not shown`);
  return b;
};
const node = (id: string) => `.vue-flow__node [data-node-id="${id}"]`;
const centre = (b: Box) => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 });

/** Drags with the mouse from one element's centre to another's (a connection, or a node into a group). */
async function drag(from: string, to: string | { x: number; y: number }) {
  const a = centre(await box(from));
  const b = typeof to === 'string' ? centre(await box(to)) : to;
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 5 });
  await page.mouse.move(b.x, b.y, { steps: 5 });
  await page.mouse.up();
}
const select = (id: string) => page.locator(`${node(id)} .fy-label`).first().click();
const fitView = () => page.locator('.vue-flow__controls-fitview').click();

beforeAll(async () => {
  e = await startFlowsE2E();
  // the data steps exist already; the control flow is drawn by hand below
  const steps = [
    { id: 'rows', title: 'Parts', tool: 'echo', arguments: { value: PARTS } },
    { id: 'notify', title: 'Nothing to send', tool: 'echo', arguments: { text: 'no parts' } },
    { id: 'mail', title: 'Mail a part', tool: 'echo', arguments: { text: 'part' } },
  ];
  const created = await e.t.api('POST', '/api/workflows', { name: 'Parts by size', plan: { steps } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  flowId = created.body.id;
  page = await e.context.newPage();
  await page.setViewportSize({ width: 1280, height: 800 });
}, 240_000);

afterAll(async () => {
  await page?.close().catch(() => {});
  await e?.close();
});

it('draws a condition and a for-each, saves the plan they mean, runs it and shows skipped and iteration badges', async () => {
  await page.goto(e.url(`/flows/${encodeURIComponent(flowId)}`));
  await page.locator(node('mail')).waitFor();
  await page.getByTestId('palette-expand').click();

  // a Condition right of the data step: case "none" holds when the list is empty
  await select('rows');
  await page.locator('[data-palette-item="condition"]').click();
  await page.locator(node('check')).waitFor();
  await page.getByTestId('palette-collapse').click();
  const editor = page.getByTestId('condition-editor');
  await editor.getByTestId('case-name').fill('none');
  await editor.getByTestId('case-name').press('Tab');
  await editor.getByTestId('cmp-left').fill('{{node.rows.result.echoed}}');
  await editor.getByTestId('cmp-left').press('Tab');
  await editor.getByTestId('cmp-op').selectOption('empty');
  await expect.poll(() => editor.getByTestId('cmp-right').count()).toBe(0); // no right side for "is empty"
  expect(await page.locator(`${node('check')} [data-port]`).evaluateAll((els) => els.map((el) => el.getAttribute('data-port')))).toEqual(['none', 'else']);
  await e.shot(page, 'control-flow-condition');

  // a For-each group right of the condition, over the parts
  await page.getByTestId('palette-expand').click();
  await page.locator('[data-palette-item="forEach"]').click();
  await page.locator(node('each')).waitFor();
  await page.getByTestId('palette-collapse').click();
  await page.getByTestId('foreach-items').fill('{{node.rows.result.echoed}}');
  await page.getByTestId('foreach-items').press('Tab');
  await page.getByTestId('foreach-concurrency').fill('2');
  await page.getByTestId('foreach-concurrency').press('Tab');
  await fitView();

  // connect: the list into the condition, its case to "notify", its else into the loop
  await drag(`${node('rows')} .fy-out-handle`, `${node('check')} .fy-in-handle`);
  await drag(`${node('check')} [data-port="none"] .vue-flow__handle`, `${node('notify')} .fy-in-handle`);
  await drag(`${node('check')} [data-port="else"] .vue-flow__handle`, `${node('each')} .fy-in-handle`);
  // drag the mail step into the group's body, then mail each part by name
  const area = await box(`${node('each')} .fy-group-area`);
  await drag(`${node('mail')} .fy-icon`, { x: area.x + area.width * 0.55, y: area.y + area.height * 0.5 });
  await expect.poll(() => page.locator(`${node('each')} .fy-group-hint`).count()).toBe(0);
  await select('mail');
  const text = page.locator('[data-arg="text"]');
  await text.locator('[data-source="expression"]').click();
  await text.getByTestId('expression').fill('Part {{item.name}} ({{index}})');
  await text.getByTestId('expression').press('Tab');
  await fitView();
  // the group grows from its corner
  const before = await box(node('each'));
  await drag(`${node('each')} [data-testid="group-resize"]`, { x: before.x + before.width + 40, y: before.y + before.height + 30 });
  await expect.poll(async () => (await box(node('each'))).width).toBeGreaterThan(before.width + 30);
  await e.shot(page, 'control-flow-drawn');

  await page.getByTestId('save').click();
  await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);
  const saved = (await e.t.api('GET', `/api/workflows/${flowId}`)).body;
  const steps = saved.plan.steps as Array<Record<string, unknown>>;
  expect(steps.find((s) => s.id === 'check')).toMatchObject({ kind: 'condition', cases: [{ name: 'none', when: { all: [{ left: '{{node.rows.result.echoed}}', op: 'empty' }] } }], dependsOn: ['rows'] });
  expect(steps.find((s) => s.id === 'notify')).toMatchObject({ dependsOn: ['check:none'] });
  expect(steps.find((s) => s.id === 'each')).toMatchObject({ kind: 'forEach', items: '{{node.rows.result.echoed}}', concurrency: 2, steps: [{ id: 'mail', arguments: { text: 'Part {{item.name}} ({{index}})' } }] });
  expect([...((steps.find((s) => s.id === 'each')?.dependsOn as string[] | undefined) ?? [])].sort()).toEqual(['check:else', 'rows']);
  expect(steps.some((s) => s.id === 'mail')).toBe(false);
  const group = (saved.graph.nodes as Array<{ id: string; data: { width?: number } }>).find((n) => n.id === 'each');
  expect(group?.data.width).toBeGreaterThan(520);

  // run it for real: the empty case is not taken, so "notify" is skipped; the loop runs three times
  await page.getByTestId('run').click();
  const dialog = page.getByTestId('run-dialog');
  await dialog.getByTestId('permission-mode').selectOption('full-access');
  await dialog.getByTestId('run-start').click();
  const panel = page.getByTestId('run-panel');
  await panel.getByTestId('approve-plan').click({ timeout: 30_000 });
  await expect.poll(() => panel.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
  await expect.poll(() => page.locator(node('notify')).getAttribute('data-badge')).toBe('skipped');
  expect(await page.locator(node('notify')).evaluate((el) => getComputedStyle(el).opacity)).toBe('0.4');
  expect(await page.locator(`${node('check')} [data-testid="branch-taken"]`).textContent()).toBe('else');
  expect(await page.locator(`${node('each')} [data-testid="loop-progress"]`).textContent()).toBe('3 / 3');
  // the loop's output viewer lists each item's result
  await page.getByTestId('tab-config').click();
  await page.locator(`${node('each')} .fy-label`).first().click();
  const items = page.getByTestId('iteration-results').locator('[data-iteration]');
  await expect.poll(() => items.count()).toBe(3);
  expect(await items.nth(1).textContent()).toContain('Part South (1)');
  await fitView();
  await e.shot(page, 'control-flow-run');
});

it('sets On error = Branch, wires the error output, runs with a failing command and retries from the failed step', async () => {
  const flag = join(e.t.home, `ready-${Date.now()}`);
  const steps = [
    { id: 'prep', title: 'Prepare', tool: 'echo', arguments: { text: 'prepared' } },
    { id: 'probe', title: 'Probe', tool: 'execute_command', arguments: { command: `test -f ${flag} || { echo not ready >&2; exit 3; }` }, dependsOn: ['prep'] },
    { id: 'report', title: 'Report', tool: 'echo', arguments: { text: 'ready' }, dependsOn: ['probe'] },
    { id: 'alert', title: 'Alert', tool: 'execute_command', arguments: { command: `cat ${flag}` } },
  ];
  const created = await e.t.api('POST', '/api/workflows', { name: 'Probe with a fallback', plan: { steps } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  await page.goto(e.url(`/flows/${encodeURIComponent(id)}`));
  await page.locator(node('alert')).waitFor();

  // a command is not retry-safe: Retry is not offered and the panel says why; Branch gives the node ok and error outputs
  await select('probe');
  const panel = page.getByTestId('failure-editor');
  expect(await panel.getByTestId('retry-blocked').textContent()).toContain('execute_command');
  await panel.getByTestId('on-error').selectOption('branch');
  await panel.getByTestId('step-timeout').fill('30');
  await panel.getByTestId('step-timeout').press('Tab');
  expect(await page.locator(`${node('probe')} [data-testid="failure-ports"] [data-port]`).evaluateAll((els) => els.map((el) => el.getAttribute('data-port')))).toEqual(['ok', 'error']);
  expect(await page.locator(`${node('probe')} [data-port="error"] circle`).getAttribute('fill')).toBe('#f44336');
  expect(await page.locator(`${node('probe')} [data-port="error"] .fy-case-name`).textContent()).toBe('error');
  await fitView();
  await drag(`${node('probe')} [data-port="error"] .vue-flow__handle`, `${node('alert')} .fy-in-handle`);
  await expect.poll(() => page.locator('.fy-edge.from-error').count()).toBe(1);
  await e.shot(page, 'failure-branch');
  await page.getByTestId('save').click();
  await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);
  const saved = (await e.t.api('GET', `/api/workflows/${id}`)).body.plan.steps as Array<Record<string, unknown>>;
  expect(saved.find((s) => s.id === 'probe')).toMatchObject({ onError: 'branch', timeoutMs: 30_000, dependsOn: ['prep'] });
  expect(saved.find((s) => s.id === 'report')).toMatchObject({ dependsOn: ['probe:ok'] });
  expect(saved.find((s) => s.id === 'alert')).toMatchObject({ dependsOn: ['probe:error'] });

  // the probe fails, so the error side runs (and fails: the file is not there) and the ok side is skipped
  await page.getByTestId('run').click();
  const dialog = page.getByTestId('run-dialog');
  await dialog.getByTestId('permission-mode').selectOption('full-access');
  await dialog.getByTestId('run-start').click();
  const runPanel = page.getByTestId('run-panel');
  await runPanel.getByTestId('approve-plan').click({ timeout: 30_000 });
  await expect.poll(() => runPanel.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('failed');
  await expect.poll(() => page.locator(node('report')).getAttribute('data-badge')).toBe('skipped');
  expect(await page.locator(node('alert')).getAttribute('data-badge')).toBe('failed');
  const failedRun = await runPanel.getByTestId('run-id').textContent();

  // Retry from failed step: the preview reuses the prepared step and marks it on the run's graph
  await runPanel.getByTestId('run-open-retry').click();
  const retry = page.getByTestId('retry-panel');
  await retry.getByTestId('retry-preview').waitFor({ timeout: 30_000 });
  expect(await retry.getByTestId('retry-reused').evaluateAll((els) => els.map((el) => el.getAttribute('data-step-id')))).toEqual(['prep']);
  expect(await retry.getByTestId('retry-rerun').evaluateAll((els) => els.map((el) => el.getAttribute('data-step-id')))).toEqual(['probe', 'report', 'alert']);
  expect(await retry.locator('[data-testid="graph-node"][data-node-id="prep"]').getAttribute('data-mark')).toBe('reused');
  expect(await retry.locator('[data-testid="graph-node"][data-node-id="probe"]').getAttribute('data-mark')).toBe('rerun');
  expect(await retry.getByTestId('retry-current').isDisabled()).toBe(false);
  await retry.scrollIntoViewIfNeeded();
  await e.shot(page, 'failure-retry-preview');

  // with the file in place the retry takes the ok side; the prepared step is reused, not run again
  writeFileSync(flag, 'ready');
  await retry.getByTestId('retry-confirm').click();
  await expect.poll(() => new URL(page.url()).searchParams.get('run')).not.toBe(failedRun);
  const run = page.getByTestId('agent-run');
  await expect.poll(() => run.getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
  const stepStatus = (stepId: string) => run.locator(`[data-testid="run-step"][data-step-id="${stepId}"]`).getAttribute('data-status');
  expect([await stepStatus('prep'), await stepStatus('probe'), await stepStatus('report'), await stepStatus('alert')]).toEqual(['done', 'done', 'done', 'skipped']);
  expect(await run.locator('[data-step-id="prep"] [data-testid="step-reused"]').count()).toBe(1);
  expect(await run.locator('[data-step-id="probe"] [data-testid="step-reused"]').count()).toBe(0);
  await e.shot(page, 'failure-retried');
});

it('adds a Human Input node, builds its form field by field with a live preview, saves, runs and answers it on the run panel', async () => {
  const created = await e.t.api('POST', '/api/workflows', { name: 'Ask for a discount', plan: { steps: [{ id: 'say', title: 'Confirm', tool: 'echo', arguments: { text: 'ok' } }] } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const id = created.body.id as string;
  await page.goto(e.url(`/flows/${encodeURIComponent(id)}`));
  await page.locator(node('say')).waitFor();
  await page.getByTestId('palette-expand').click();
  await page.locator('[data-palette-item="input"]').click();
  await page.locator(node('ask')).waitFor();
  await page.getByTestId('palette-collapse').click();

  // the first field: a required number; the preview follows each change
  const editor = page.getByTestId('input-editor');
  const preview = page.getByTestId('input-preview');
  const rows = editor.getByTestId('input-field-row');
  const first = rows.nth(0);
  await first.getByTestId('input-field-name').fill('discount');
  await first.getByTestId('input-field-name').press('Tab');
  await first.getByTestId('input-field-title').fill('Discount (%)');
  await first.getByTestId('input-field-title').press('Tab');
  await first.getByTestId('input-field-type').selectOption('number');
  await expect.poll(() => preview.getByTestId('form-discount').getAttribute('type')).toBe('number');
  expect(await preview.innerText()).toContain('Discount (%)');
  // a second field: a choice, not required
  await editor.getByTestId('input-add-field').click();
  await expect.poll(() => rows.count()).toBe(2);
  const second = rows.nth(1);
  await second.getByTestId('input-field-name').fill('region');
  await second.getByTestId('input-field-name').press('Tab');
  await second.getByTestId('input-field-options').fill('north, south');
  await second.getByTestId('input-field-options').press('Tab');
  await expect.poll(() => preview.getByTestId('form-region').locator('option').allTextContents()).toEqual(['north', 'south']);
  expect(await preview.getByTestId('inbox-submit').isDisabled()).toBe(true); // a preview sends nothing
  await e.shot(page, 'human-input-builder');

  // the answer feeds the next step
  await fitView();
  await drag(`${node('ask')} .fy-out-handle`, `${node('say')} .fy-in-handle`);
  await select('say');
  const text = page.locator('[data-arg="text"]');
  await text.locator('[data-source="expression"]').click();
  await text.getByTestId('expression').fill('{{node.ask.result.discount}}% for {{node.ask.result.region}}');
  await text.getByTestId('expression').press('Tab');
  await page.getByTestId('save').click();
  await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);
  const steps = (await e.t.api('GET', `/api/workflows/${id}`)).body.plan.steps as Array<Record<string, unknown>>;
  expect(steps.find((s) => s.id === 'ask')).toMatchObject({ kind: 'input', form: { type: 'object', properties: { discount: { type: 'number', title: 'Discount (%)' }, region: { type: 'string', enum: ['north', 'south'] } } } });
  expect(steps.find((s) => s.id === 'say')).toMatchObject({ dependsOn: ['ask'] });

  // run it: the run waits at the form on the run panel; the answer goes on to the next step
  await page.getByTestId('run').click();
  const dialog = page.getByTestId('run-dialog');
  await dialog.getByTestId('permission-mode').selectOption('full-access');
  await dialog.getByTestId('run-start').click();
  const panel = page.getByTestId('run-panel');
  await panel.getByTestId('approve-plan').click({ timeout: 30_000 });
  await panel.getByTestId('form-discount').waitFor({ timeout: 30_000 });
  await panel.getByTestId('form-discount').fill('15');
  await panel.getByTestId('form-region').selectOption('south');
  await panel.getByTestId('inbox-submit').click();
  await expect.poll(() => panel.getByTestId('run-status').getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
  const runId = await panel.getByTestId('run-id').textContent();
  const run = (await e.t.api('GET', `/api/agent/runs/${runId}`)).body;
  expect(run.executions.find((x: { stepId: string }) => x.stepId === 'ask').result).toEqual({ discount: 15, region: 'south' });
  expect(run.executions.find((x: { stepId: string }) => x.stepId === 'say').result).toMatchObject({ echoed: '15% for south' });
});
