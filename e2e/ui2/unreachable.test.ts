import { afterAll, beforeAll, expect, it } from 'vitest';
import { startUi2, type Ui2 } from './harness';

/** When the host goes away, every page says so (the shell's banner, the page's own error), and nothing pretends to load. */
let u: Ui2;
beforeAll(async () => {
  u = await startUi2({ backend: false });
});
afterAll(async () => {
  await u?.close();
});

it('shows the unreachable banner and the page error once the host is gone', async () => {
  const { page, t } = u;
  await u.open('/agent');
  await page.getByTestId('agent-no-backend').waitFor();
  await t.api('POST', '/api/workflows', { name: 'Kept flow', plan: { steps: [{ id: 'a', tool: 'echo', arguments: { text: 'x' } }] } });
  const other = (await t.api('POST', '/api/workflows', { name: 'Other flow', plan: { steps: [{ id: 'b', tool: 'echo', arguments: { text: 'y' } }] } })).body;
  // visit the pages first: their code is served by the host too (a page never opened cannot load once it is gone)
  await page.locator('[data-nav="flows"]').click();
  await page.locator('.flow-card-main', { hasText: 'Kept flow' }).click(); // the builder, then back to the library (client-side)
  await page.getByTestId('builder').waitFor();
  await page.locator(`.fy-node[data-node-id="a"]`).waitFor();
  await page.goBack();
  await page.getByTestId('flows-library').waitFor();
  for (const [nav, ready] of [['runs', 'runs-empty'], ['settings', 'settings-rules'], ['plugins', 'plugins-empty']]) {
    await page.locator(`[data-nav="${nav}"]`).click();
    await page.getByTestId(ready).waitFor();
  }
  await t.host.close();
  // the Flows library: the banner, its own error, no cards and no "no flows yet"
  await page.locator('[data-nav="flows"]').click();
  await page.getByTestId('host-unreachable').waitFor({ timeout: 10_000 });
  await page.locator('[data-testid="flows-library"] [role="alert"]').waitFor({ timeout: 10_000 });
  expect(await page.locator('.flow-card-main').count()).toBe(0);
  expect(await page.getByTestId('flows-empty').count()).toBe(0);
  // the builder of a flow not loaded before says it could not load it, and shows no other flow in its place
  await page.evaluate((id) => { history.pushState({}, '', `/flows/${id}`); dispatchEvent(new PopStateEvent('popstate')); }, other.id);
  await page.locator('[data-testid="builder"] [role="alert"]', { hasText: /could not load this flow/i }).first().waitFor({ timeout: 10_000 });
  expect(await page.locator('.fy-node[data-node-id="a"]').count()).toBe(0);
  await u.shot('ui2-unreachable-builder');
  for (const nav of ['runs', 'settings', 'plugins']) {
    await page.locator(`[data-nav="${nav}"]`).click();
    await page.getByTestId('host-unreachable').waitFor({ timeout: 10_000 });
  }
  await page.getByTestId('plugins-error').waitFor();
  expect(await page.getByTestId('plugin-card').count()).toBe(0);
  await u.shot('ui2-unreachable');
});
