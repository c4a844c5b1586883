import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planTurn, startUi2, type Ui2 } from './harness';

/**
 * Agent page and Runs page against the real host: plan a goal (streamed plan), edit a step,
 * approve, approve a step gate, read a result; then search the history and rewind the run to its
 * first step, which lands in plan review.
 */
let u: Ui2;
let firstRun = '';
const GOAL = 'Greet the team and leave a note';

beforeAll(async () => {
  u = await startUi2();
});
afterAll(async () => {
  await u?.close();
});

describe('agent page', () => {
  it('plans a goal, takes an edited step, pauses at the write step and shows the results', async () => {
    const { page, llm } = u;
    llm.push(
      planTurn([
        { id: 'greet', title: 'Greet', tool: 'echo', arguments: { text: 'hello' } },
        { id: 'note', title: 'Write the note', tool: 'write_note', arguments: { text: 'remember {{steps.1.result.echoed}}' }, dependsOn: ['greet'] },
        { id: 'bye', title: 'Say bye', tool: 'echo', arguments: { text: 'bye' }, dependsOn: ['note'] },
      ]),
      { text: 'Greeted the team and wrote the note.' },
    );
    await u.open('/agent');
    await page.getByTestId('agent-goal').fill(GOAL);
    await expect.poll(() => page.getByTestId('agent-backend').inputValue()).toBe('local');
    await page.getByTestId('agent-start').click();
    await page.waitForURL(/\/agent\?run=/);
    firstRun = new URL(page.url()).searchParams.get('run') ?? '';
    expect(firstRun).not.toBe('');
    // the plan streams in token by token before it is ready for review
    await page.getByTestId('plan-stream').waitFor({ timeout: 15_000 });
    await page.getByTestId('plan-review').waitFor({ timeout: 20_000 });
    await u.shot('ui2-agent-plan-review');
    await page.getByTestId('tab-graph').click();
    await expect.poll(() => page.getByTestId('graph-node').count()).toBe(4);
    await u.shot('ui2-agent-plan-graph');
    await page.getByTestId('tab-list').click();

    // edit a step: change the greeting, then approve the edited plan
    const arg = page.locator('[data-step-id="greet"] [data-testid="step-arg"][data-arg="text"]');
    await arg.fill('hello, edited');
    await arg.press('Tab');
    await page.getByTestId('plan-edited').waitFor();
    await page.getByTestId('plan-approve').click();

    // ask mode: the write step pauses with its tool, arguments and effect
    const gate = page.getByTestId('step-gate');
    await gate.waitFor({ timeout: 20_000 });
    expect(await gate.getAttribute('data-step-id')).toBe('note');
    expect(await gate.innerText()).toContain('write_note');
    expect(await gate.innerText()).toContain('remember hello, edited');
    await u.shot('ui2-agent-step-gate');
    await page.getByTestId('gate-approve').click();

    await page.getByTestId('run-summary').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('run-status').innerText()).toBe('Completed');
    const progress = page.getByTestId('run-progress');
    expect(await progress.getAttribute('data-done')).toBe('3');
    expect(await progress.getAttribute('data-total')).toBe('3');
    await page.locator('[data-step-id="greet"] [data-testid="step-result-toggle"]').click();
    expect(await page.locator('[data-step-id="greet"] [data-testid="step-result"]').innerText()).toContain('hello, edited');
    await u.shot('ui2-agent-run-done');
    await page.getByTestId('tab-graph').click();
    await expect.poll(() => page.locator('[data-testid="graph-node"][data-badge="done"]').count()).toBe(3);
    await u.shot('ui2-agent-run-graph');
  });

  it('shows an honest error for a goal when no model answers', async () => {
    const { page } = u;
    await u.open('/agent');
    await page.getByTestId('agent-goal').fill('this one has no scripted turn');
    await page.getByTestId('agent-start').click();
    await page.waitForURL(/\/agent\?run=/);
    await page.getByTestId('run-failed').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('run-status').innerText()).toBe('Failed');
  });
});

describe('runs page', () => {
  it('finds the run by live search and rewinds it to its first step, landing in plan review', async () => {
    const { page, llm } = u;
    await u.open('/runs');
    await page.getByTestId('runs-table').waitFor();
    await u.shot('ui2-runs-history');
    await page.getByTestId('runs-search').fill('Greet the team');
    await expect.poll(() => page.getByTestId('run-row').count()).toBe(1);
    await page.getByTestId('runs-search').fill('no run has this text');
    await page.getByTestId('runs-empty').waitFor();
    await page.getByTestId('runs-search').fill('Greet the team');
    await expect.poll(() => page.getByTestId('run-row').count()).toBe(1);
    await page.locator('[data-testid="runs-filter"][data-status="failed"]').click();
    await page.getByTestId('runs-empty').waitFor();
    await page.locator('[data-testid="runs-filter"][data-status="failed"]').click();
    await page.locator(`[data-run-id="${firstRun}"]`).click();
    await page.getByTestId('run-detail').waitFor();
    await expect.poll(() => page.getByTestId('detail-step').count()).toBe(3);
    // audit trail: rule decisions and approvals are there
    const kinds = await page.getByTestId('audit-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind')));
    expect(kinds).toContain('audit_permission');
    expect(kinds).toContain('step_approved');
    expect(kinds).toContain('plan_approved');
    await page.locator('[data-step-id="note"] [data-testid="step-result-toggle"]').click();
    await page.locator('[data-step-id="note"] [data-testid="step-result"]').waitFor();

    await page.getByTestId('run-rewind').click();
    await page.getByTestId('rewind-keep').fill('1');
    expect(await page.getByTestId('rewind-count').innerText()).toContain('1 of 3');
    expect(await page.locator('.step.dropped').count()).toBe(2);
    // the dropped write step already wrote its note: marked, and listed with the warning; the dropped read step is not
    await page.locator('[data-step-id="note"] [data-testid="rewind-applied-mark"]').waitFor();
    expect(await page.locator('[data-step-id="bye"] [data-testid="rewind-applied-mark"]').count()).toBe(0);
    expect(await page.getByTestId('rewind-applied').innerText()).toContain('rewinding does not undo it');
    expect(await page.locator('[data-testid="rewind-applied"] li').allInnerTexts()).toEqual([expect.stringContaining('Write the note')]);
    await u.shot('ui2-run-detail-rewind');
    await page.getByTestId('rewind-confirm').click();
    await page.waitForURL((url) => url.pathname === '/agent' && url.searchParams.get('run') !== firstRun);
    await page.getByTestId('plan-review').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByTestId('plan-step').count()).toBe(1);
    expect(await page.locator('[data-testid="plan-step"]').first().getAttribute('data-step-id')).toBe('greet');
    llm.push({ text: 'Rewound run done.' });
    await page.getByTestId('plan-approve').click();
    await page.getByTestId('run-summary').waitFor({ timeout: 20_000 });
  });
});

describe('fork', () => {
  it('forks a finished run into a new one paused at plan review, then resumes it after a cancel', async () => {
    const { page } = u;
    await u.open(`/runs?id=${firstRun}`);
    await page.getByTestId('run-fork').click();
    await page.waitForURL((url) => url.pathname === '/agent' && url.searchParams.get('run') !== firstRun);
    await page.getByTestId('plan-review').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByTestId('plan-step').count()).toBe(3);
    await page.getByTestId('plan-reject').click();
    await expect.poll(() => page.getByTestId('run-status').innerText()).toBe('Cancelled');
    // a cancelled run resumes: same run, back at plan review
    const forked = new URL(page.url()).searchParams.get('run') ?? '';
    await page.getByTestId('agent-open-history').click();
    await page.getByTestId('run-resume').click();
    await page.waitForURL((url) => url.pathname === '/agent' && url.searchParams.get('run') === forked);
    await page.getByTestId('plan-review').waitFor({ timeout: 20_000 });
    await page.getByTestId('plan-approve').click();
    await page.getByTestId('step-gate').waitFor({ timeout: 20_000 });
    await page.getByTestId('gate-reject').click();
    await page.getByTestId('run-failed').or(page.getByTestId('run-summary')).waitFor({ timeout: 20_000 });
  });
});

describe('batch and access', () => {
  it('starts two goals at once and follows each run separately', async () => {
    const { page, llm } = u;
    llm.push(planTurn([{ id: 'one', tool: 'echo', arguments: { text: '1' } }]), planTurn([{ id: 'two', tool: 'echo', arguments: { text: '2' } }]));
    await u.open('/runs');
    await page.getByTestId('batch-open').click();
    await page.getByTestId('batch-goals').fill('Batch goal one\n\nBatch goal two');
    await page.getByTestId('batch-start').click();
    await expect.poll(() => page.getByTestId('batch-run').count()).toBe(2);
    await expect.poll(() => page.locator('[data-testid="batch-run"] .chip.awaiting_plan_approval').count(), { timeout: 20_000 }).toBe(2);
    await u.shot('ui2-runs-batch');
    const ids = await page.getByTestId('batch-run').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) await u.t.api('POST', `/api/agent/${id}/cancel`);
  });

  it('asks for the token when the browser has none (or a wrong one), then loads the page', async () => {
    const { page, t } = u;
    await page.goto(`${t.host.url}/runs`);
    await page.evaluate(() => localStorage.setItem('fengyu.token', 'wrong-token'));
    await page.goto(`${t.host.url}/runs`);
    const dialog = page.getByTestId('token-dialog');
    await dialog.waitFor();
    await dialog.locator('input').fill(t.host.token);
    await dialog.locator('button[type="submit"]').click();
    await page.getByTestId('runs-table').waitFor();
    expect(await page.getByTestId('token-dialog').count()).toBe(0);
  });
});
