import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './build-ui';
import { packHelloWithHooks } from './fixtures';
import { startUi2, type Ui2 } from './harness';

/** Plugins page (install a .fyp by upload, trust hooks, disable, uninstall) and Settings page (rules with line errors, try a rule, keys). */
let u: Ui2;
let work: string;
let fyp: string;

beforeAll(async () => {
  u = await startUi2();
  work = mkdtempSync(join(tmpdir(), 'fengyu-ui2-plugin-'));
  fyp = await packHelloWithHooks(work);
  writeFileSync(join(work, 'not-a-plugin.fyp'), 'this is not a zip');
});
afterAll(async () => {
  await u?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('plugins page', () => {
  it('installs a .fyp upload, shows its tools, trusts its hooks, disables and uninstalls it', async () => {
    const { page } = u;
    await u.open('/plugins');
    await page.getByTestId('plugins-empty').waitFor();
    await page.getByTestId('plugin-file').setInputFiles(join(work, 'not-a-plugin.fyp'));
    await page.getByTestId('plugins-error').waitFor();

    await page.getByTestId('plugin-file').setInputFiles(fyp);
    const card = page.locator('[data-testid="plugin-card"][data-plugin-id="dev.fengyu.hello"]');
    await card.waitFor();
    expect(await card.getByTestId('plugin-version').innerText()).toBe('v1.0.0');
    await card.getByTestId('plugin-ai').waitFor();
    await card.getByTestId('plugin-tools-toggle').click();
    expect(await card.getByTestId('plugin-tools').innerText()).toContain('hello_write_note');

    await card.getByTestId('plugin-trust').click();
    await page.getByTestId('confirm-ok').click();
    await expect.poll(() => card.getByTestId('plugin-hooks').innerText()).toContain('Hooks trusted');
    await u.shot('ui2-plugins');

    await card.getByTestId('plugin-toggle').click();
    await expect.poll(() => card.getByTestId('plugin-state').innerText()).toBe('Disabled');
    const listed = await u.t.api('GET', '/api/plugins');
    expect(listed.body[0].enabled).toBe(false);
    // A disabled plugin's tools stay in the authoring catalog, marked unavailable.
    const tools = (await u.t.api('GET', '/api/agent/tools')).body as Array<{ name: string; available: boolean }>;
    expect(tools.find((x) => x.name === 'hello_greet')?.available).toBe(false);

    await card.getByTestId('plugin-uninstall').click();
    await page.getByTestId('confirm-cancel').click();
    await card.waitFor();
    await card.getByTestId('plugin-uninstall').click();
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('plugins-empty').waitFor();
    // reinstall for the zh-CN pass and screenshots of later tests
    await page.getByTestId('plugin-file').setInputFiles(fyp);
    await card.waitFor();
  });
});

describe('settings page', () => {
  it('flags a malformed rule by its line and saves good rules', async () => {
    const { page } = u;
    await u.open('/settings');
    await page.getByTestId('rules-allow').fill('Effect(read)\nTool(\n\nCommand(git status)');
    await page.getByTestId('rules-deny').fill('Command(rm:*)');
    await page.getByTestId('rules-save').click();
    const errors = page.getByTestId('rules-allow-errors');
    await errors.waitFor();
    expect(await errors.locator('li').getAttribute('data-line')).toBe('2');
    expect(await page.locator('[data-list="allow"] .gutter .bad').innerText()).toBe('2');
    expect(await page.locator('[data-list="deny"] .gutter .bad').count()).toBe(0);
    await u.shot('ui2-settings-rule-error');
    const saved = await u.t.api('GET', '/api/settings');
    expect(saved.body.permissions?.allow ?? []).toEqual([]);

    await page.getByTestId('rules-allow').fill('Effect(read)\n\nCommand(git status)');
    await page.getByTestId('rules-save').click();
    await expect.poll(async () => (await u.t.api('GET', '/api/settings')).body.permissions.allow).toEqual(['Effect(read)', 'Command(git status)']);
    expect(await page.getByTestId('rules-allow-errors').count()).toBe(0);

    // try a rule: the typed deny rule wins over the mode
    await page.getByTestId('try-tool').fill('execute_command');
    await page.getByTestId('try-args').fill('{"command": "rm -rf build"}');
    await page.getByTestId('try-run').click();
    const verdict = page.getByTestId('try-result');
    await verdict.waitFor();
    expect(await verdict.getAttribute('data-decision')).toBe('deny');
  });

  it('never shows a saved key, and keeps it when the backend is saved again', async () => {
    const { page } = u;
    await u.open('/settings');
    const key = page.getByTestId('backend-key').first();
    await key.waitFor();
    expect(await key.inputValue()).toBe('');
    expect(await key.getAttribute('placeholder')).toContain('saved');
    expect(await page.content()).not.toContain('sk-e2e-secret');
    await page.getByTestId('backend-model').first().fill('scripted-2');
    await page.getByTestId('backends-save').click();
    await expect.poll(async () => (await u.t.api('GET', '/api/settings')).body.backends[0].model).toBe('scripted-2');
    expect((await u.t.api('GET', '/api/settings')).body.backends[0].apiKey).toBe('[redacted]');
    await page.getByTestId('settings-rules').scrollIntoViewIfNeeded();
    await u.shot('ui2-settings');
    await page.getByTestId('settings-backends').scrollIntoViewIfNeeded();
    await u.shot('ui2-settings-backends');
  });

  it('edits hooks, and shows an MCP server with its connection status and tools', async () => {
    const { page } = u;
    await u.open('/settings');
    await page.getByTestId('settings-hooks').getByRole('button', { name: 'Add hook' }).click();
    const row = page.getByTestId('hook-row').first();
    await row.locator('input').nth(0).fill('audit-log');
    await row.locator('input[placeholder="Command to run"]').fill('echo called');
    await page.getByTestId('hooks-save').click();
    await expect.poll(async () => (await u.t.api('GET', '/api/settings')).body.hooks?.[0]?.name).toBe('audit-log');

    const everything = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
    await page.getByTestId('mcp-config').fill(JSON.stringify({ everything: { command: process.execPath, args: [everything] } }, null, 2));
    await page.getByTestId('mcp-save').click();
    const server = page.locator('[data-testid="mcp-server"][data-server="everything"]');
    await expect.poll(async () => { await page.getByTestId('settings-mcp').getByRole('button', { name: 'Refresh' }).click(); return (await server.getByTestId('mcp-state').innerText().catch(() => '')); }, { timeout: 20_000, interval: 1000 }).toBe('Connected');
    await server.getByRole('button', { name: /Tools/ }).click();
    expect(await server.innerText()).toContain('everything__echo');
    await page.getByTestId('settings-mcp').scrollIntoViewIfNeeded();
    await u.shot('ui2-settings-mcp');
  });
});
