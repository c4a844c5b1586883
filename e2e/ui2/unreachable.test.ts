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
  // visit the pages first: their code is served by the host too (a page never opened cannot load once it is gone)
  for (const [nav, ready] of [['runs', 'runs-empty'], ['settings', 'settings-rules'], ['plugins', 'plugins-empty']]) {
    await page.locator(`[data-nav="${nav}"]`).click();
    await page.getByTestId(ready).waitFor();
  }
  await t.host.close();
  for (const nav of ['runs', 'settings', 'plugins']) {
    await page.locator(`[data-nav="${nav}"]`).click();
    await page.getByTestId('host-unreachable').waitFor({ timeout: 10_000 });
  }
  await page.getByTestId('plugins-error').waitFor();
  expect(await page.getByTestId('plugin-card').count()).toBe(0);
  await u.shot('ui2-unreachable');
});
