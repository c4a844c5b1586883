import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestHost, type TestHost } from '../../packages/host/test/support/host';
import { settle } from '../support/settle';
import { englishLeft, SHOTS, startUi2, type Ui2 } from './harness';

/**
 * Scheduled tasks, background runs and webhook triggers in real Chromium against a real host, at
 * 1280×800 in a browser whose zone is Asia/Shanghai: a daily schedule with its next run and
 * calendar; a background run killed from the run panel; a full queue allowance read as "busy";
 * a webhook created, delivered to with fetch, audited, rotated and deleted; the zh-CN pass.
 */
let u: Ui2;
let page: Page;
const ids: Record<string, string> = {};
const ZONE = 'Asia/Shanghai';

async function publish(name: string, steps: unknown[], inputSchema: Record<string, unknown> = { type: 'object', properties: {} }): Promise<string> {
  const made = await u.t.api('POST', '/api/workflows', { name, inputSchema, plan: { steps } });
  if (made.status !== 200) throw new Error(JSON.stringify(made.body));
  const pub = await u.t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  if (pub.status !== 200) throw new Error(JSON.stringify(pub.body));
  return made.body.id;
}

async function open(path: string) {
  await page.goto(`${u.t.host.url}${path}#token=${encodeURIComponent(u.t.host.token)}`);
}

async function shot(name: string) {
  await settle(page);
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false, animations: 'disabled' });
}

async function tasks(): Promise<Array<{ id: string; state: string; workflowId: string }>> {
  return (await u.t.api('GET', '/api/agent/tasks?limit=200')).body.items;
}

async function killAll() {
  for (const task of await tasks()) if (task.state === 'queued' || task.state === 'running') await u.t.api('POST', `/api/agent/tasks/${task.id}/kill`);
}

beforeAll(async () => {
  // one owner fills every slot here: lift the per-owner running cap (12 of 16 by default)
  u = await startUi2({ backend: false, env: { ...process.env, FENGYU_TASK_OWNER_MAX_RUNNING: '16' } });
  const context = await u.browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: ZONE, locale: 'en-US' });
  page = await context.newPage();
  ids.report = await publish('Daily report', [{ id: 'say', tool: 'echo', arguments: { text: '{{inputs.who}}' } }], { type: 'object', required: ['who'], properties: { who: { type: 'string', title: 'Who' } } });
  ids.sleeper = await publish('Long job', [{ id: 'wait', tool: 'slow', arguments: { ms: 600_000 } }]);
  ids.writer = await publish('Note writer', [{ id: 'note', tool: 'write_note', arguments: { text: 'x' } }]);
  ids.picker = await publish('Sheet import', [{ id: 'say', tool: 'echo', arguments: { text: 'x' } }], { type: 'object', properties: { sheet: { type: 'string', format: 'fengyu-file', title: 'Sheet' } } });
});

afterAll(async () => {
  if (u) await killAll().catch(() => {});
  await u?.close();
});

describe('scheduled tasks page', () => {
  it('creates a daily schedule (09:00 in the browser zone by default), previews it on a calendar and lists its next run', async () => {
    await open('/schedules');
    await page.getByTestId('schedules-empty').waitFor();
    await page.getByTestId('schedule-new').click();
    const form = page.getByTestId('schedule-form');
    await form.waitFor();
    expect(await page.getByTestId('schedule-time').inputValue()).toBe('09:00');
    expect(await page.getByTestId('schedule-zone').inputValue()).toBe(ZONE);
    // the host's preview and the calendar, before anything is saved
    await expect.poll(() => page.locator('[data-testid="schedule-preview"] li').count(), { timeout: 15_000 }).toBe(5);
    await expect.poll(() => page.locator('[data-testid="calendar-strip"] .day.fires').count()).toBeGreaterThanOrEqual(7);
    expect(await page.locator('[data-testid="calendar-strip"] .day.fires .time').first().innerText()).toBe('09:00');

    // nothing is sent while a field is wrong: no workflow, no mode, bad JSON
    await page.getByTestId('schedule-save').click();
    await page.getByTestId('error-workflowId').waitFor();
    await page.getByTestId('error-permissionMode').waitFor();
    await page.getByTestId('schedule-workflow').selectOption(ids.report as string);
    await page.getByTestId('schedule-mode').selectOption('full-access');
    await page.getByTestId('schedule-advanced').click();
    await page.getByTestId('schedule-inputs').fill('{"who": 5}');
    await page.getByTestId('schedule-save').click();
    await expect.poll(() => page.getByTestId('error-inputs').first().innerText()).toContain('"who"');
    expect((await u.t.api('GET', '/api/agent/schedules')).body.items).toHaveLength(0);

    await page.getByTestId('schedule-inputs').fill('{"who": "ann"}');
    await shot('schedules-form');
    await page.getByTestId('schedule-save').click();
    const row = page.getByTestId('schedule-row');
    await row.waitFor({ timeout: 15_000 });
    const [saved] = (await u.t.api('GET', '/api/agent/schedules')).body.items;
    expect(saved).toMatchObject({ workflowId: ids.report, permissionMode: 'full-access', inputs: { who: 'ann' }, recurrence: { kind: 'daily', time: '09:00', timeZone: ZONE }, state: 'active' });
    expect(await row.getByTestId('schedule-when').innerText()).toBe('Every day at 09:00');
    expect(await row.getByTestId('schedule-next').locator('time').getAttribute('datetime')).toBe(saved.nextRunAt);
    expect(await row.getByTestId('schedule-next').innerText()).toMatch(/^in \d+ (hours?|minutes?|seconds?)$|^tomorrow$/);
    expect(await row.getByTestId('schedule-state').innerText()).toBe('Active');
    await shot('schedules-list');
  });

  it('shows the host’s unattended-mode guidance beside the permission picker and creates nothing', async () => {
    await open('/schedules');
    await page.getByTestId('schedule-row').first().waitFor();
    await page.getByTestId('schedule-new').click();
    await page.getByTestId('kind-weekly').check();
    await page.getByTestId('weekday-6').check();
    await page.getByTestId('schedule-workflow').selectOption(ids.writer as string);
    await page.getByTestId('schedule-mode').selectOption('ask');
    await page.getByTestId('schedule-save').click();
    const guidance = page.getByTestId('unattended-guidance');
    await guidance.waitFor({ timeout: 15_000 });
    expect(await guidance.innerText()).toContain('Nobody can answer an approval');
    expect(await guidance.locator('code').allInnerTexts()).toEqual(expect.arrayContaining(['ask', 'approve-for-me', 'full-access']));
    expect((await u.t.api('GET', '/api/agent/schedules')).body.items).toHaveLength(1);
    await shot('schedules-guidance');
    // choosing deliberately is accepted
    await page.getByTestId('schedule-mode').selectOption('approve-for-me');
    await page.getByTestId('schedule-save').click();
    await expect.poll(() => page.getByTestId('schedule-row').count(), { timeout: 15_000 }).toBe(2);
    expect(await page.getByTestId('schedule-when').allInnerTexts()).toContain('Every Mon, Tue, Wed, Thu, Fri, Sat at 09:00');
  });

  it('deletes a schedule after confirming', async () => {
    await open('/schedules');
    await expect.poll(() => page.getByTestId('schedule-row').count(), { timeout: 15_000 }).toBe(2);
    await page.getByTestId('schedule-delete').first().click();
    await page.getByTestId('confirm-ok').click();
    await expect.poll(() => page.getByTestId('schedule-row').count()).toBe(1);
    expect((await u.t.api('GET', '/api/agent/schedules')).body.items).toHaveLength(1);
  });

  it('is reachable by keyboard: Tab to "New schedule", Enter opens the form on its first field, Escape closes it', async () => {
    await open('/schedules');
    await page.getByTestId('schedule-row').first().waitFor();
    const focused = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid ?? document.activeElement?.id ?? '');
    for (let i = 0; i < 40 && (await focused()) !== 'schedule-new'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('schedule-new');
    await page.keyboard.press('Enter');
    await page.getByTestId('schedule-form').waitFor();
    await expect.poll(focused).toBe('schedule-workflow');
    // the weekday toggles and the Advanced disclosure are reachable too
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      seen.add(await focused());
    }
    expect([...seen]).toEqual(expect.arrayContaining(['kind-daily', 'schedule-time', 'schedule-zone', 'schedule-mode', 'schedule-advanced', 'schedule-save']));
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('schedule-form').count()).toBe(0);
  });
});

describe('background runs and the capacity view', () => {
  it('runs a workflow in the background, shows it advancing in the run panel, and kills it there', async () => {
    await open(`/flows/${ids.sleeper}`);
    await page.getByTestId('run').click();
    await page.getByTestId('run-dialog').waitFor();
    await page.getByTestId('permission-mode').selectOption('full-access');
    await page.getByTestId('run-background').click();
    await page.getByTestId('background-started').waitFor({ timeout: 15_000 });
    await page.getByTestId('run-dialog-close').click();
    await page.getByTestId('tab-run').click();
    const row = page.locator('[data-testid="task-row"][data-state="running"]');
    await row.waitFor({ timeout: 20_000 });
    const taskId = (await row.getAttribute('data-task-id')) as string;
    expect((await tasks()).find((x) => x.id === taskId)).toMatchObject({ workflowId: ids.sleeper, state: 'running' });
    const before = await row.getByTestId('task-duration').innerText();
    await expect.poll(() => row.getByTestId('task-duration').innerText(), { timeout: 10_000 }).not.toBe(before);
    expect(await page.locator('[data-testid="capacity-class"][data-priority="normal"]').innerText()).toContain('1 running');
    await shot('run-panel-capacity');
    await row.getByTestId('task-kill').click();
    await page.getByTestId('confirm-ok').click();
    await expect.poll(async () => (await tasks()).find((x) => x.id === taskId)?.state, { timeout: 20_000 }).toBe('cancelled');
    await page.locator(`[data-testid="task-row"][data-task-id="${taskId}"][data-state="cancelled"]`).waitFor({ timeout: 10_000 });
  });

  it("keeps a flow's Run tab true: only its tasks, named; a run started meanwhile ends as Completed without a reload", async () => {
    // a task of another flow, which this flow's tab must not list
    const other = await u.t.api('POST', '/api/agent/tasks', { workflowId: ids.sleeper, permissionMode: 'full-access' });
    expect(other.status).toBe(202);
    await open(`/flows/${ids.report}`);
    await page.getByTestId('tab-run').click();
    await page.getByTestId('background-tasks').waitFor();
    // started after the tab was opened: the recent runs and the task list must follow it
    const task = await u.t.api('POST', '/api/agent/tasks', { workflowId: ids.report, permissionMode: 'full-access', inputs: { who: 'later' } });
    expect(task.status).toBe(202);
    const row = page.locator(`[data-testid="task-row"][data-task-id="${task.body.id}"][data-state="completed"]`);
    await row.waitFor({ timeout: 20_000 });
    expect(await row.getByTestId('task-flow').innerText()).toBe('Daily report');
    expect(await row.getByTestId('task-kind').innerText()).toBe('By hand');
    expect(await page.locator(`[data-testid="task-row"][data-task-id="${other.body.id}"]`).count()).toBe(0);
    const recent = page.locator('[data-testid="recent-run"]').first();
    await expect.poll(() => recent.getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
    expect((await page.locator('[data-testid="recent-run"]').count())).toBe(1);
    const text = await page.getByTestId('recent-runs').innerText();
    expect(text).toContain('Background task');
    expect(text).not.toMatch(/\d{4}-\d\d-\d\dT/);
    await shot('run-tab-recent-runs');
    await killAll();
  });

  it('reads a full queue allowance as "busy, retry in 1 s" with the scope, and warns in the panel', async () => {
    const scopes: Record<string, string> = { owner: 'your queue allowance', global: 'the global queue', 'owner-priority': 'your share for this priority', 'global-priority': 'the global share for this priority' };
    try {
      // 16 running slots, then the owner's 32 queue places (interactive work may take all of them)
      for (let i = 0; i < 48; i++) {
        const res = await u.t.api('POST', '/api/agent/tasks', { workflowId: ids.sleeper, permissionMode: 'full-access', priority: 'interactive' });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
      }
      await open(`/flows/${ids.sleeper}`);
      await page.getByTestId('tab-run').click();
      await page.locator('[data-testid="capacity-warning"][data-kind="ownQueueFull"]').waitFor({ timeout: 20_000 });
      expect(await page.getByTestId('capacity-own').innerText()).toContain('Queued 32 of 32');
      await page.getByTestId('run').click();
      await page.getByTestId('permission-mode').selectOption('full-access');
      await page.getByTestId('run-background').click();
      const err = page.getByTestId('run-dialog-error');
      await err.waitFor({ timeout: 15_000 });
      // the same refusal as the API gives, in words
      const api = await u.t.api('POST', '/api/agent/tasks', { workflowId: ids.sleeper, permissionMode: 'full-access' });
      expect(api.status).toBe(429);
      const d = api.body.error.details;
      const scope = scopes[d.capacityScope] as string;
      const priority = d.capacityPriority ? `, ${d.capacityPriority === 'batch' ? 'Batch' : 'Normal'} reservation full` : '';
      expect(await err.innerText()).toBe(`The host is busy (${scope}${priority}); retry in 1 s.`);
      await shot('run-dialog-busy');
      await page.getByTestId('run-dialog-close').click();
    } finally {
      await killAll();
    }
    await expect.poll(async () => (await tasks()).filter((x) => x.state === 'queued' || x.state === 'running').length, { timeout: 30_000 }).toBe(0);
  });
});

describe('webhook triggers', () => {
  it('says before saving, in plain words, that a webhook cannot bring the file the flow needs', async () => {
    await open(`/flows/${ids.picker}`);
    await page.getByTestId('run').click();
    await page.getByTestId('permission-mode').selectOption('full-access');
    await page.getByTestId('webhook-section').click();
    const note = page.getByTestId('webhook-needs-files');
    await note.waitFor({ timeout: 15_000 });
    expect(await note.textContent()).toContain('cannot bring a file');
    expect(await note.textContent()).not.toMatch(/picker|shared director/);
    expect(await page.getByTestId('webhook-create').isDisabled()).toBe(true);
    await page.getByTestId('run-dialog-close').click();
  });

  it('creates a webhook, shows the secret once, and lists a delivery made with fetch; rotates and deletes it', async () => {
    await open(`/flows/${ids.report}`);
    await page.getByTestId('run').click();
    await page.getByTestId('input-who').fill('from defaults');
    await page.getByTestId('permission-mode').selectOption('full-access');
    await page.getByTestId('webhook-section').click();
    await page.getByTestId('webhook-name').fill('CRM hook');
    await page.getByTestId('webhook-create').click();
    await page.getByTestId('webhook-created').waitFor({ timeout: 15_000 });
    const url = await page.getByTestId('webhook-url').inputValue();
    const secret = await page.getByTestId('webhook-secret').inputValue();
    expect(url).toMatch(/\/api\/workflow-hooks\/wh_/);
    expect(secret.length).toBeGreaterThanOrEqual(22);
    expect(await page.getByTestId('secret-warning').innerText()).toContain('shown only once');
    expect(await page.getByTestId('webhook-curl').inputValue()).toContain(`X-FengYu-Webhook-Secret: ${secret}`);
    await shot('webhook-created');
    await page.getByTestId('webhook-done').click();
    await page.getByTestId('tab-run').click();
    const trigger = page.getByTestId('webhook-trigger');
    await trigger.waitFor({ timeout: 15_000 });
    await trigger.getByTestId('trigger-expand').click();
    await trigger.getByText('No delivery yet.').waitFor();

    // a wrong secret is refused and leaves no audit row; the right one starts a task
    const wrong = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': 'nope' }, body: '{}' });
    expect(wrong.status).toBe(401);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': secret, 'x-fengyu-event-id': 'evt-1' }, body: JSON.stringify({ who: 'bob' }) });
    expect(res.status).toBe(202);
    const answer = (await res.json()) as { taskId: string };
    const delivery = trigger.getByTestId('delivery-row');
    await delivery.waitFor({ timeout: 15_000 });
    await expect.poll(() => delivery.getAttribute('data-state'), { timeout: 20_000 }).toBe('COMPLETED');
    expect(await trigger.getByTestId('delivery-row').count()).toBe(1);
    expect(await delivery.innerText()).toContain(answer.taskId);
    expect(await delivery.innerText()).toContain('Event id: supplied');
    await trigger.scrollIntoViewIfNeeded();
    await shot('webhook-deliveries');

    // rotate: the old secret fails at once
    await trigger.getByTestId('trigger-rotate').click();
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('webhook-created').waitFor();
    const fresh = await page.getByTestId('webhook-secret').inputValue();
    expect(fresh).not.toBe(secret);
    await page.getByTestId('webhook-done').click();
    const old = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': secret }, body: '{}' });
    expect(old.status).toBe(401);

    // delete after confirming: the address answers 404
    await trigger.getByTestId('trigger-delete').click();
    await page.getByTestId('confirm-ok').click();
    await expect.poll(() => page.getByTestId('webhook-trigger').count()).toBe(0);
    const gone = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': fresh }, body: '{}' });
    expect(gone.status).toBe(404);
  });
});

describe('missed fires', () => {
  it('shows a flow’s occurrences missed while the host was stopped in its run panel (en, zh-CN)', async () => {
    // a real host whose clock jumps 5½ hours between two starts on one home: five hourly
    // boundaries pass while it is down, one recovery run fires and four are missed
    const home = mkdtempSync(join(tmpdir(), 'fengyu-ui2-missed-'));
    const uiDir = inject('ui2Dist');
    const first = await startTestHost({ keepHome: home, uiDir });
    let second: TestHost | undefined;
    try {
      const made = await first.api('POST', '/api/workflows', { name: 'Hourly tick', plan: { steps: [{ id: 'tick', tool: 'echo', arguments: { text: 'tick' } }] } });
      expect((await first.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision })).status).toBe(200);
      const created = await first.api('POST', '/api/agent/schedules', { workflowId: made.body.id, permissionMode: 'full-access', recurrence: { kind: 'interval', everySeconds: 3600 } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await first.close();
      second = await startTestHost({ keepHome: home, uiDir, clock: { now: () => Date.now() + 5.5 * 3600_000 } });
      const later = second;
      await expect.poll(async () => (await later.api('GET', `/api/agent/schedules/${created.body.id}`)).body.missedFires, { timeout: 20_000 }).toBe(4);
      await page.goto(`${later.host.url}/flows/${made.body.id}#token=${encodeURIComponent(later.host.token)}`);
      await page.getByTestId('locale').selectOption('en');
      await page.getByTestId('tab-run').click();
      const note = page.getByTestId('schedule-missed-note');
      await expect.poll(() => note.textContent(), { timeout: 15_000 }).toBe('4 occurrence(s) missed while the host was stopped; they were combined into one run when it started again.');
      await page.getByTestId('flow-schedules').scrollIntoViewIfNeeded();
      await shot('run-panel-missed-fires');
      await page.getByTestId('locale').selectOption('zh-CN');
      await expect.poll(() => note.textContent()).toBe('宿主停止期间错过了 4 次触发；宿主再次启动时已合并为一次运行。');
      await shot('run-panel-missed-fires-zh');
      await page.getByTestId('locale').selectOption('en');
    } finally {
      await second?.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('zh-CN', () => {
  it('leaves no English on the schedules page, its form, the run dialog and the run panel', async () => {
    // a trigger with a delivery, and a finished background task, for the panel
    const made = await u.t.api('POST', `/api/workflows/${ids.report}/webhooks`, { permissionMode: 'full-access', defaults: { who: 'zh' }, name: 'zh hook' });
    const hook = await fetch(`${u.t.host.url}/api/workflow-hooks/${made.body.trigger.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': made.body.secret }, body: '{}' });
    expect(hook.status).toBe(202);
    await open('/schedules');
    await page.getByTestId('locale').selectOption('zh-CN');
    await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('zh-CN');
    const left: Record<string, string[]> = {};
    const check = async (name: string, drop = '') => {
      const words = await englishLeft(page, ['Daily', 'report', 'zh', 'hook', 'curl', 'Who', 'ID', 'note'], drop);
      if (words.length) left[name] = words;
    };
    await page.getByTestId('schedule-row').waitFor();
    await check('schedules');
    await shot('schedules-list-zh');
    await page.getByTestId('schedule-new').click();
    await page.getByTestId('schedule-workflow').selectOption(ids.writer as string);
    await page.getByTestId('schedule-mode').selectOption('ask');
    await page.getByTestId('schedule-advanced').click();
    await page.getByTestId('schedule-save').click();
    await page.getByTestId('unattended-guidance').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator('[data-testid="schedule-preview"] li').count()).toBe(5);
    await check('schedule form');
    await shot('schedules-form-zh');
    await page.keyboard.press('Escape');

    await open(`/flows/${ids.report}`);
    await page.getByTestId('tab-run').click();
    const trigger = page.locator('[data-testid="webhook-trigger"]', { hasText: 'zh hook' });
    await trigger.waitFor({ timeout: 15_000 });
    await trigger.getByTestId('trigger-expand').click();
    await page.locator('[data-testid="delivery-row"][data-state="COMPLETED"]').waitFor({ timeout: 20_000 });
    await page.locator('[data-testid="task-row"]').first().waitFor();
    await trigger.scrollIntoViewIfNeeded();
    await check('run panel', '.canvas-area, .palette, .toolbar, [data-testid="config-panel"], .side .tabs');
    await shot('run-panel-capacity-zh');
    await page.getByTestId('run').click();
    await page.getByTestId('webhook-section').click();
    await check('run dialog', '.canvas-area, .palette, .toolbar, .side');
    await page.getByTestId('permission-mode').selectOption('full-access');
    await page.getByTestId('webhook-create').click();
    await page.getByTestId('webhook-created').waitFor({ timeout: 15_000 });
    await check('webhook created', '.canvas-area, .palette, .toolbar, .side');
    await shot('webhook-created-zh');
    expect(left).toEqual({});
  });
});
