import { afterAll, beforeAll, expect, it } from 'vitest';
import { startUi2, type Ui2 } from './harness';

/**
 * Addresses: the bare address and the token the host prints, deep links with their query, the
 * browser's back and forward, unknown addresses, and the unsaved-changes question on Back.
 */
let u: Ui2;
let flowId = '';
beforeAll(async () => {
  u = await startUi2({ backend: false });
  const plan = { steps: [{ id: 'a', title: 'First', tool: 'echo', arguments: { text: 'x' } }] };
  flowId = (await u.t.api('POST', '/api/workflows', { name: 'Routed flow', plan })).body.id;
});
afterAll(async () => {
  await u?.close();
});

/** A fresh page load (the same address with only a new `#token` would be an in-page jump). */
async function load(address: string) {
  await u.page.goto('about:blank');
  await u.open(address);
}

const path = () => {
  const url = new URL(u.page.url());
  return `${url.pathname}${url.search}${url.hash}`;
};

it('opens the library from the bare address and takes the token out of it', async () => {
  const { page, t } = u;
  await load('/');
  await page.getByTestId('flows-library').waitFor();
  await expect.poll(path).toBe('/flows');
  expect(await page.evaluate(() => localStorage.getItem('fengyu.token'))).toBe(t.host.token);
  await page.locator('.flow-card-main', { hasText: 'Routed flow' }).waitFor();
});

it('serves deep links with their query, and a trailing slash', async () => {
  const { page } = u;
  await load(`/flows/${flowId}`);
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  expect(await page.getByTestId('toolbar-name').inputValue()).toBe('Routed flow');
  await load('/agent?run=run_missing');
  await page.getByTestId('agent-not-found').waitFor();
  expect(path()).toBe('/agent?run=run_missing');
  await load('/runs/');
  await page.getByTestId('runs-empty').waitFor();
});

it('shows the not-found page for an unknown address, with a way back', async () => {
  const { page } = u;
  for (const unknown of ['/nowhere', '/FLOWS', '/flows/a/b']) {
    await load(unknown);
    await page.getByText(unknown, { exact: false }).first().waitFor();
    expect(await page.getByTestId('flows-library').count()).toBe(0);
  }
  await page.locator('.page.placeholder a[href="/flows"]').click();
  await page.getByTestId('flows-library').waitFor();
  expect(path()).toBe('/flows');
});

it('goes back and forward through the pages visited', async () => {
  const { page } = u;
  await load('/flows');
  await page.locator('.flow-card-main', { hasText: 'Routed flow' }).click();
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  expect(path()).toBe(`/flows/${flowId}`);
  await page.locator('[data-nav="runs"]').click();
  await page.getByTestId('runs-empty').waitFor();
  await page.goBack();
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  expect(path()).toBe(`/flows/${flowId}`);
  await page.goBack();
  await page.getByTestId('flows-library').waitFor();
  expect(path()).toBe('/flows');
  await page.goForward();
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  await page.goForward();
  await page.getByTestId('runs-empty').waitFor();
  expect(path()).toBe('/runs');
});

it('asks before Back leaves a flow with unsaved changes: Cancel stays, Discard goes', async () => {
  const { page } = u;
  await load('/flows');
  await page.locator('.flow-card-main', { hasText: 'Routed flow' }).click();
  await page.locator('.fy-node[data-node-id="a"]').waitFor();
  const field = page.getByTestId('toolbar-name');
  await field.fill('Edited, not saved');
  await field.press('Tab');
  await page.getByTestId('unsaved').waitFor();
  await page.goBack();
  await page.getByTestId('confirm-dialog').waitFor();
  await page.getByTestId('confirm-cancel').click();
  await expect.poll(path).toBe(`/flows/${flowId}`);
  expect(await field.inputValue()).toBe('Edited, not saved');
  expect(await page.getByTestId('flows-library').count()).toBe(0);
  await page.goBack();
  await page.getByTestId('confirm-ok').click();
  await page.getByTestId('flows-library').waitFor();
  expect(path()).toBe('/flows');
});

it('says the host is unreachable when a page never opened cannot load any more', async () => {
  const { page, t } = u;
  await load('/flows');
  await page.getByTestId('flows-library').waitFor();
  await t.host.close();
  await page.locator('[data-nav="schedules"]').click();
  await page.locator('.content > .page.placeholder[role="alert"]', { hasText: /cannot be reached/ }).waitFor({ timeout: 10_000 });
  expect(await page.getByTestId('flows-library').count()).toBe(0);
});
