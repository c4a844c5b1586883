import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { packPlugin } from '../../packages/plugin-sdk/src/pack';
import { packHelloWithHooks } from './fixtures';
import { startUi2, type Ui2 } from './harness';

/** A plugin card's upgrade (a higher version's .fyp picked on the card) and its sandbox posture. */
let u: Ui2;
let work: string;
beforeAll(async () => {
  u = await startUi2({ backend: false });
  work = mkdtempSync(join(tmpdir(), 'fengyu-ui2-upgrade-'));
});
afterAll(async () => {
  await u?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

it('upgrades an installed plugin from its card and shows its sandbox posture', async () => {
  const { page, t } = u;
  const v1 = await packHelloWithHooks(work);
  const src = join(work, 'hello');
  const manifest = JSON.parse(readFileSync(join(src, 'manifest.json'), 'utf8'));
  manifest.version = '1.1.0';
  writeFileSync(join(src, 'manifest.json'), JSON.stringify(manifest, null, 2));
  const v2 = (await packPlugin(src, join(work, 'hello-1.1.0.fyp'))).file;

  await u.open('/plugins');
  await page.getByTestId('plugins-empty').waitFor();
  await page.getByTestId('plugin-file').setInputFiles(v1);
  const card = page.locator('[data-testid="plugin-card"][data-plugin-id="dev.fengyu.hello"]');
  await card.waitFor();
  expect(await card.getByTestId('plugin-version').innerText()).toBe('v1.0.0');
  const listed = (await t.api('GET', '/api/plugins')).body[0];
  const posture = listed.sandbox?.mode === 'sandboxed' ? /Sandboxed \(/ : /Not sandboxed/;
  expect(await card.innerText()).toMatch(posture);

  await card.locator('input[type="file"]').setInputFiles(v2);
  await expect.poll(() => card.getByTestId('plugin-version').innerText(), { timeout: 20_000 }).toBe('v1.1.0');
  expect((await t.api('GET', '/api/plugins')).body[0].version).toBe('1.1.0');
  expect(await page.locator('[data-testid="plugin-card"]').count()).toBe(1);
});
