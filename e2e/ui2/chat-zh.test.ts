import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installPlugin, packHelloWithHooks } from './fixtures';
import { settle } from '../support/settle';
import { englishLeft, startUi2, type Ui2 } from './harness';

/** Chat page (streamed answer, tool cards, a confirmation card, reopening), then a zh-CN pass over every page. */
let u: Ui2;

beforeAll(async () => {
  // the official plugins are bundled so the zh-CN pass covers their cards and tool lists
  u = await startUi2({ plugins: true });
});
afterAll(async () => {
  await u?.close();
});

describe('chat page', () => {
  it('streams an answer with a tool card, asks before a write call, and reopens the conversation', async () => {
    const { page, llm } = u;
    llm.push(
      { toolCalls: [{ name: 'echo', arguments: { text: 'ping' } }] },
      { toolCalls: [{ name: 'write_note', arguments: { text: 'from chat' } }] },
      { text: 'I echoed ping and wrote the note for you.', chunkDelayMs: 20 },
    );
    await u.open('/chat');
    await page.getByTestId('chat-input').fill('Echo ping, then write a note');
    await page.getByTestId('chat-input').press('Enter');
    const approval = page.getByTestId('chat-approval');
    await approval.waitFor({ timeout: 20_000 });
    expect(await approval.innerText()).toContain('write_note');
    await page.locator('[data-testid="chat-tool"][data-tool="echo"]').waitFor();
    await u.shot('ui2-chat-approval');
    await page.getByTestId('chat-approve').click();
    await expect.poll(() => page.locator('[data-testid="chat-assistant"][data-streaming="false"]').last().innerText(), { timeout: 20_000 }).toContain('wrote the note');
    await page.locator('[data-testid="chat-tool"][data-tool="write_note"] .head').click();
    expect(await page.locator('[data-testid="chat-tool"][data-tool="write_note"]').innerText()).toContain('from chat');
    await u.shot('ui2-chat');

    await page.getByTestId('chat-new').click();
    expect(await page.getByTestId('chat-user').count()).toBe(0);
    await page.getByTestId('chat-conversation').first().click();
    await page.getByTestId('chat-user').waitFor();
    await expect.poll(() => page.getByTestId('chat-tool').count()).toBe(2);
    expect(await page.getByTestId('chat-assistant').last().innerText()).toContain('wrote the note');
  });
});

describe('zh-CN', () => {
  it('leaves no English on any page once the language is switched', async () => {
    const { page, t } = u;
    // data for every page: a finished run, one waiting for plan review, an installed plugin
    const done = await t.api('POST', '/api/agent/run', { goal: 'zh pass: finished run', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 'a', title: 'Echo', tool: 'echo', arguments: { text: 'x' } }] } });
    await t.stream(done.body.runId);
    const review = await t.api('POST', '/api/agent/run', { goal: 'zh pass: review', workflow: { steps: [{ id: 'a', title: 'Echo', tool: 'echo', arguments: { text: 'x' } }, { id: 'b', tool: 'write_note', arguments: { text: 'y' }, dependsOn: ['a'] }] } });
    await t.waitFor(review.body.runId, 'plan_approval_requested');
    const work = mkdtempSync(join(tmpdir(), 'fengyu-ui2-zh-'));
    await installPlugin(t, await packHelloWithHooks(work));
    rmSync(work, { recursive: true, force: true });

    await u.open('/agent');
    await page.getByTestId('locale').selectOption('zh-CN');
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('zh-CN');
    const pages: Array<[string, string, string]> = [
      ['/agent', 'agent-composer', 'ui2-zh-agent'],
      [`/agent?run=${review.body.runId}`, 'plan-review', 'ui2-zh-agent-review'],
      [`/agent?run=${done.body.runId}`, 'run-summary', 'ui2-zh-agent-run'],
      ['/runs', 'runs-table', 'ui2-zh-runs'],
      [`/runs?id=${done.body.runId}`, 'audit-table', 'ui2-zh-run-detail'],
      ['/plugins', 'plugin-card', 'ui2-zh-plugins'],
      ['/settings', 'settings-rules', 'ui2-zh-settings'],
      ['/chat', 'chat-composer', 'ui2-zh-chat'],
    ];
    const left: Record<string, string[]> = {};
    for (const [path, ready, shot] of pages) {
      await u.open(path);
      await page.getByTestId(ready).first().waitFor({ timeout: 20_000 });
      if (path === '/chat') await page.getByTestId('chat-conversation').first().click();
      if (path === '/chat') await page.getByTestId('chat-tool').first().waitFor();
      if (path === '/plugins') for (const toggle of await page.getByTestId('plugin-tools-toggle').all()) await toggle.click();
      await settle(page);
      // code quoted in the official plugins' zh-CN descriptions: tool names, field paths, TLS modes, file types
      const code = ['SMTP', 'eml', 'TLS', 'none', 'starttls', 'tls', 'local-outbox', 'excel', 'execute', 'confirmation', 'confirmationId', 'id', 'confirm', 'send', 'batch', 'Excel', 'xlsx', 'complex', 'config', 'browser', 'extract', 'table', 'rows'];
      const words = await englishLeft(page, ['echo', 'write_note', 'note', 'local', 'scripted', 'zh', 'pass', 'finished', 'review', 'Echo', 'ping', ...code]);
      if (words.length) left[path] = words;
      await u.shot(shot);
    }
    expect(left).toEqual({});
  });
});
