import { afterAll, beforeAll, expect, it } from 'vitest';
import { startUi2, type Ui2 } from './harness';

/** Runs page status filters and paging; the web search endpoint on Settings. */
let u: Ui2;
beforeAll(async () => {
  u = await startUi2();
});
afterAll(async () => {
  await u?.close();
});

it('pages the history 20 at a time and filters it by status', async () => {
  const { page, t } = u;
  const config = { planApproval: false, permissionMode: 'full-access' };
  for (let i = 0; i < 21; i++) {
    const r = await t.api('POST', '/api/agent/run', { goal: `paging ${i}`, config, workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { text: String(i) } }] } });
    await t.stream(r.body.runId);
  }
  const bad = await t.api('POST', '/api/agent/run', { goal: 'the failing one', config, workflow: { steps: [{ id: 'a', tool: 'fail', arguments: {} }] } });
  await t.stream(bad.body.runId);
  await u.open('/runs');
  const rows = page.getByTestId('run-row');
  await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(20);
  expect(await rows.first().getAttribute('data-run-id')).toBe(bad.body.runId); // newest first
  await page.getByTestId('runs-more').click();
  await expect.poll(() => rows.count()).toBe(22);
  expect(await page.getByTestId('runs-more').count()).toBe(0);
  await page.locator('[data-testid="runs-filter"][data-status="failed"]').click();
  await expect.poll(() => rows.count()).toBe(1);
  expect(await rows.first().getAttribute('data-run-id')).toBe(bad.body.runId);
  await page.locator('[data-testid="runs-filter"][data-status="failed"]').click();
  await expect.poll(() => rows.count()).toBe(20);
});

it('saves and clears the web search endpoint', async () => {
  const { page, t } = u;
  await u.open('/settings');
  await page.getByTestId('search-url').fill('http://127.0.0.1:8888');
  await page.getByTestId('search-save').click();
  await expect.poll(async () => (await t.api('GET', '/api/settings')).body.webSearch?.url, { timeout: 10_000 }).toBe('http://127.0.0.1:8888');
  await page.reload();
  await expect.poll(() => page.getByTestId('search-url').inputValue()).toBe('http://127.0.0.1:8888');
  await page.getByTestId('search-url').fill('');
  await page.getByTestId('search-save').click();
  await expect.poll(async () => (await t.api('GET', '/api/settings')).body.webSearch ?? null, { timeout: 10_000 }).toBe(null);
});
