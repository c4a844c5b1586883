import { afterAll, beforeAll, expect, it } from 'vitest';
import { startUi2, type Ui2 } from './harness';

/** The builder's settings drawer (publish, versions, restore) and the unsaved-changes confirmations. */
let u: Ui2;
let flowId = '';
beforeAll(async () => {
  u = await startUi2();
  const plan = { steps: [{ id: 'a', title: 'First', tool: 'echo', arguments: { text: 'x' } }] };
  flowId = (await u.t.api('POST', '/api/workflows', { name: 'Version one', plan })).body.id;
});
afterAll(async () => {
  await u?.close();
});

async function rename(name: string) {
  const field = u.page.getByTestId('toolbar-name');
  await field.fill(name);
  await field.press('Tab');
  await u.page.getByTestId('unsaved').waitFor();
}

it('publishes from the drawer, lists the version and restores it into the draft', async () => {
  const { page, t } = u;
  await u.open(`/flows/${flowId}`);
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  await page.getByTestId('open-settings').click();
  const drawer = page.getByTestId('settings-drawer');
  await drawer.waitFor();
  await drawer.getByTestId('publish').click();
  await drawer.locator('[data-version="1"]').waitFor({ timeout: 10_000 });
  expect((await t.api('GET', `/api/workflows/${flowId}`)).body.state).toBe('published');
  await rename('Version two');
  await page.getByTestId('save').click();
  await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);
  // restoring with unsaved edits asks first; Cancel keeps them
  await rename('Unsaved name');
  await drawer.locator('[data-version="1"]').getByTestId('restore').click();
  await page.getByTestId('confirm-dialog').waitFor();
  await page.getByTestId('confirm-cancel').click();
  expect(await page.getByTestId('toolbar-name').inputValue()).toBe('Unsaved name');
  await drawer.locator('[data-version="1"]').getByTestId('restore').click();
  await page.getByTestId('confirm-ok').click();
  await expect.poll(() => page.getByTestId('toolbar-name').inputValue()).toBe('Version one');
  await expect.poll(async () => (await t.api('GET', `/api/workflows/${flowId}`)).body.name).toBe('Version one');
});

it('asks before leaving a flow with unsaved changes, and stays on Cancel', async () => {
  const { page } = u;
  await u.open(`/flows/${flowId}`);
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  await rename('Not saved yet');
  await page.locator('[data-nav="runs"]').click();
  await page.getByTestId('confirm-dialog').waitFor();
  await page.getByTestId('confirm-cancel').click();
  expect(new URL(page.url()).pathname).toBe(`/flows/${flowId}`);
  expect(await page.getByTestId('toolbar-name').inputValue()).toBe('Not saved yet');
  // the browser's own leave guard is armed too
  expect(await page.evaluate(() => { const e = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(e); return e.defaultPrevented; })).toBe(true);
  await page.locator('[data-nav="runs"]').click();
  await page.getByTestId('confirm-ok').click();
  await page.waitForURL(/\/runs/);
});

it('pins a finished step result from the output viewer: a marker on the card, kept in the saved plan', async () => {
  const { page, t } = u;
  const run = await t.api('POST', `/api/workflows/${flowId}/run`, { config: { permissionMode: 'full-access' } });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  await t.stream(run.body.runId);
  await u.open(`/flows/${flowId}?run=${run.body.runId}`);
  await expect.poll(() => page.locator('.fy-node[data-node-id="a"]').getAttribute('data-badge'), { timeout: 20_000 }).toBe('done');
  await page.locator('.fy-node[data-node-id="a"] .fy-label').click();
  await page.getByTestId('tab-config').click();
  const viewer = page.getByTestId('output-viewer');
  await viewer.waitFor();
  await expect.poll(() => viewer.getByTestId('pin').isEnabled()).toBe(true);
  await viewer.getByTestId('pin').click();
  await page.locator('.fy-node[data-node-id="a"] .fy-pin').waitFor();
  await viewer.getByTestId('unpin').waitFor();
  await page.getByTestId('save').click();
  await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);
  const saved = (await t.api('GET', `/api/workflows/${flowId}`)).body;
  expect(saved.plan.steps[0].pinned).toBeTruthy();
  // the next run serves the pin instead of calling the tool
  const next = await t.api('POST', `/api/workflows/${flowId}/run`, { config: { permissionMode: 'full-access' } });
  const events = await t.stream(next.body.runId);
  expect(events.some((e) => e.type === 'step_start' && (e.data as { pinned?: boolean }).pinned === true), JSON.stringify(events.map((e) => e.type))).toBe(true);
  await page.getByTestId('undo').click();
  await expect.poll(() => page.locator('.fy-node[data-node-id="a"] .fy-pin').count()).toBe(0);
});

it('publishes from the toolbar, and the header shows the real version state', async () => {
  const { page, t } = u;
  const id = (await t.api('POST', '/api/workflows', { name: 'Toolbar publish', plan: { steps: [{ id: 'a', title: 'First', tool: 'echo', arguments: { text: 'x' } }] } })).body.id;
  await u.open(`/flows/${id}`);
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  const state = page.getByTestId('version-state');
  await expect.poll(() => state.getAttribute('data-state')).toBe('draft');
  await page.getByTestId('toolbar-publish').click();
  await expect.poll(() => state.getAttribute('data-state')).toBe('published');
  expect(await page.getByTestId('toolbar-publish').isDisabled()).toBe(true);
  expect((await t.api('GET', `/api/workflows/${id}`)).body.publishedVersion).toBe(1);
  // An edit is not published until Publish is pressed again.
  await rename('Toolbar publish, edited');
  await expect.poll(() => state.getAttribute('data-state')).toBe('changed');
  await page.getByTestId('save').click();
  await expect.poll(() => page.getByTestId('unsaved').count()).toBe(0);
  expect(await state.getAttribute('data-state')).toBe('changed');
  expect(await state.textContent()).toContain('v1');
  // Publishing with unsaved edits saves them first.
  await rename('Toolbar publish v2');
  await page.getByTestId('toolbar-publish').click();
  await expect.poll(() => state.getAttribute('data-state')).toBe('published');
  const def = (await t.api('GET', `/api/workflows/${id}`)).body;
  expect(def).toMatchObject({ name: 'Toolbar publish v2', publishedVersion: 2, hasDraftChanges: false });
});
