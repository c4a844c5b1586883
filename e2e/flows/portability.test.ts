import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FlowsE2E, startFlowsE2E } from './harness';

/**
 * Workflows in and out in the real UI at 1280×800: export from the library (a real download),
 * import by dropping the file on the library, compare two published versions side by side with
 * the changes marked, and switch "Serve over MCP" on in the flow settings.
 */

let e: FlowsE2E;
let flowId = '';

beforeAll(async () => {
  e = await startFlowsE2E();
  await e.page.setViewportSize({ width: 1280, height: 800 });
  const plan = (steps: unknown[]) => ({ steps });
  const created = await e.t.api('POST', '/api/workflows', { name: 'Weekly digest', plan: plan([{ id: 'fetch', title: 'Fetch', tool: 'echo', arguments: { value: 'a' } }, { id: 'old', title: 'Old step', tool: 'echo', arguments: { value: 'b' }, dependsOn: ['fetch'] }]) });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  flowId = created.body.id;
  const v1 = await e.t.api('POST', `/api/workflows/${flowId}/publish`, { revision: created.body.revision });
  const edited = await e.t.api('PUT', `/api/workflows/${flowId}`, { revision: v1.body.revision, plan: plan([{ id: 'fetch', title: 'Fetch', tool: 'echo', arguments: { value: 'changed' } }, { id: 'new', title: 'New step', tool: 'echo', arguments: { value: 'c' }, dependsOn: ['fetch'] }]) });
  expect(edited.status, JSON.stringify(edited.body)).toBe(200);
  expect((await e.t.api('POST', `/api/workflows/${flowId}/publish`, { revision: edited.body.revision })).status).toBe(200);
}, 240_000);

afterAll(async () => {
  await e?.close();
});

it('exports from the library and imports the file back by dropping it on the library', async () => {
  const { page } = e;
  await page.goto(e.url('/flows'));
  const card = page.locator(`.flow-card[data-flow-id="${flowId}"]`);
  const [download] = await Promise.all([page.waitForEvent('download'), card.getByTestId('export').click()]);
  expect(download.suggestedFilename()).toBe(`weekly-digest.${flowId}.fengyu.json`);
  const text = readFileSync((await download.path()) as string, 'utf8');
  expect(JSON.parse(text)).toMatchObject({ format: 'fengyu.workflow', name: 'Weekly digest' });

  // drop the file on the library, as a person drags it from their file manager
  const drop = await page.evaluateHandle((content) => {
    const dt = new DataTransfer();
    dt.items.add(new File([content], 'weekly-digest.fengyu.json', { type: 'application/json' }));
    return dt;
  }, text);
  await page.dispatchEvent('[data-testid="flows-library"]', 'drop', { dataTransfer: drop });
  await expect.poll(() => page.getByTestId('import-notice').textContent()).toContain('Imported "Weekly digest (2)" as a draft.');
  await expect.poll(() => page.locator('.flow-card').count()).toBe(2);
  await e.shot(page, 'portability-import');

  // a file that is not a flow: the problem in plain words, nothing added
  const bad = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['{"format":"something-else"}'], 'other.json', { type: 'application/json' }));
    return dt;
  });
  await page.dispatchEvent('[data-testid="flows-library"]', 'drop', { dataTransfer: bad });
  await expect.poll(() => page.getByTestId('import-error').textContent()).toContain('other.json');
  expect(await page.locator('.flow-card').count()).toBe(2);
});

it('compares two published versions side by side with the changes marked', async () => {
  const { page } = e;
  await page.goto(e.url(`/flows/${encodeURIComponent(flowId)}`));
  await page.getByTestId('open-settings').click();
  await page.locator('[data-version="1"] [data-testid="compare"]').click();
  const modal = page.getByTestId('version-compare');
  await modal.getByTestId('compare-to').selectOption('2');
  await expect.poll(() => modal.locator('[data-testid="compare-right"] [data-mark="added"]').count()).toBe(1);
  expect(await modal.locator('[data-testid="compare-left"] [data-testid="diff-node-old"]').getAttribute('data-mark')).toBe('removed');
  expect(await modal.locator('[data-testid="compare-right"] [data-testid="diff-node-new"]').getAttribute('data-mark')).toBe('added');
  expect(await modal.locator('[data-testid="compare-right"] [data-testid="diff-node-fetch"]').getAttribute('data-mark')).toBe('changed');
  expect(await modal.getByTestId('compare-summary').textContent()).toContain('fetch — changed: arguments');
  await e.shot(page, 'portability-compare');
  await modal.getByRole('button', { name: 'Close' }).click();
});

it('serves the flow over MCP from the flow settings, with a client configuration to copy', async () => {
  const { page, t } = e;
  await page.getByTestId('mcp-enabled').check();
  await expect.poll(async () => (await t.api('GET', `/api/workflows/${flowId}`)).body.mcp).toEqual({ enabled: true, permissionMode: 'ask' });
  expect(await page.getByTestId('mcp-config-http').textContent()).toContain('/mcp');
  expect(await page.getByTestId('mcp-config-http').textContent()).not.toContain(t.host.token);
  // the stdio launch names this host's node and entry script by absolute path, never `npx`
  await expect.poll(() => page.getByTestId('mcp-config-stdio').textContent()).toContain('fengyu.mjs');
  const stdio = JSON.parse((await page.getByTestId('mcp-config-stdio').textContent()) ?? '{}').mcpServers.fengyu;
  expect(stdio).toEqual((await t.api('GET', '/api/mcp/client')).body.stdio);
  expect(stdio.command).not.toBe('npx');
  await page.getByTestId('mcp-mode').selectOption('approve-for-me');
  await expect.poll(async () => (await t.api('GET', `/api/workflows/${flowId}`)).body.mcp.permissionMode).toBe('approve-for-me');
  await e.shot(page, 'portability-mcp');
});
