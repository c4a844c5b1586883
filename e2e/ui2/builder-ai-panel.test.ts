import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequestBody, ScriptedTurn } from '../../packages/host/test/support/scripted-openai';
import { startUi2, type Ui2 } from './harness';

/**
 * The builder's AI panel in Chromium at 1280×800: no backend → a link to the settings; a flow
 * built from an empty canvas shown as a diff, applied and saved as one undoable step; a stale
 * proposal refused after a manual edit; a real run through run_current_flow.
 */
let u: Ui2;
let turns: ScriptedTurn[] = [];

beforeAll(async () => {
  u = await startUi2();
  await u.page.setViewportSize({ width: 1280, height: 800 });
});
afterAll(async () => {
  await u?.close();
});

/** Turns in order; a nested workflow run's summary request is answered on the side. */
function script(next: ScriptedTurn[]) {
  turns = [...next];
  const isSummary = (req: ChatRequestBody) => JSON.stringify(req.messages[0]).includes('You summarize');
  for (let i = 0; i < next.length + 1; i++) u.llm.push((req) => (isSummary(req) ? { text: 'workflow summary' } : (turns.shift() ?? { text: 'unexpected' })));
}

/** The panel starts as a button (its open state is then remembered): open it when it is closed. */
async function openPanel() {
  const button = u.page.getByTestId('ai-panel-open');
  await button.or(u.page.getByTestId('ai-panel')).first().waitFor();
  if (await button.count()) await button.click();
  await u.page.getByTestId('ai-panel').waitFor();
}

async function ask(text: string) {
  await u.page.getByTestId('ai-panel-input').fill(text);
  await u.page.getByTestId('ai-panel-send').click();
}

async function box(l: Locator) {
  const b = await l.boundingBox();
  if (!b) throw new Error('not visible');
  return b;
}
const overlaps = (a: { x: number; y: number; width: number; height: number }, b: typeof a) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

const STEPS = [
  { id: 'first', title: 'First echo', tool: 'echo', arguments: { text: '{{inputs.topic}}' } },
  { id: 'second', title: 'Second echo', tool: 'echo', arguments: { value: '{{node.first.result}}' }, dependsOn: ['first'] },
  { id: 'third', title: 'Third echo', tool: 'echo', arguments: { value: '{{node.second.result}}' }, dependsOn: ['second'] },
];

describe('builder AI panel', () => {
  it('says so and links to the model settings when no backend is configured', async () => {
    const { page, t } = u;
    expect((await t.api('PATCH', '/api/settings', { backends: [], defaultBackend: null })).status).toBe(200);
    await u.open('/flows/new');
    await openPanel();
    await ask('hello?');
    const note = page.getByTestId('ai-panel-no-backend');
    await note.waitFor();
    expect(await note.locator('a').getAttribute('href')).toContain('/settings');
    await u.shot('builder-ai-panel-no-backend');
    // the link lands on the Chat backends section, not on the top of Settings
    await note.locator('a').click();
    const backends = page.getByTestId('settings-backends');
    await backends.waitFor();
    await expect.poll(() => backends.evaluate((el) => Math.round(el.getBoundingClientRect().top)), { timeout: 10_000 }).toBeLessThan(120);
    expect(await backends.evaluate((el) => el.getBoundingClientRect().top)).toBeGreaterThanOrEqual(0);
    const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: u.llm.url, model: 'scripted' }], defaultBackend: 'local' });
    expect(res.status).toBe(200);
  });

  it('builds a three-node flow from an empty canvas: a diff, then one undoable apply-and-save', async () => {
    const { page, t } = u;
    await u.open('/flows/new');
    await openPanel();
    const panel = page.getByTestId('ai-panel');
    // docked bottom-right, clear of the canvas controls and the minimap
    const p = await box(panel);
    expect(overlaps(p, await box(page.getByTestId('canvas-controls')))).toBe(false);
    if (await page.getByTestId('minimap').isVisible()) expect(overlaps(p, await box(page.getByTestId('minimap')))).toBe(false);
    const canvas = await box(page.getByTestId('canvas'));
    expect(p.x + p.width).toBeLessThanOrEqual(canvas.x + canvas.width);
    expect(p.y + p.height).toBeLessThanOrEqual(canvas.y + canvas.height);

    script([
      { toolCalls: [{ name: 'edit_current_flow', arguments: { mode: 'replace', steps: STEPS, inputSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] }, summary: 'Three echo steps in a row' } }] },
      { text: 'I proposed a three-step flow. Apply it to save.', chunkDelayMs: 10 },
    ]);
    await ask('Build a flow that echoes a topic three times');
    await page.getByTestId('ai-panel-proposal').waitFor({ timeout: 20_000 });
    for (const id of ['first', 'second', 'third']) expect(await page.getByTestId(`diff-node-${id}`).getAttribute('data-mark')).toBe('added');
    expect(await page.getByTestId('ai-panel-counts').innerText()).toContain('+3');
    await expect.poll(() => page.getByTestId('ai-panel-answer').last().innerText(), { timeout: 20_000 }).toContain('Apply it to save');
    expect((await t.api('GET', '/api/workflows')).body.workflows).toHaveLength(0);
    await u.shot('builder-ai-panel-proposal');

    await page.getByTestId('ai-panel-apply').click();
    await page.getByTestId('ai-panel-saved').waitFor();
    await expect.poll(() => page.url()).toMatch(/\/flows\/[^/?#]+/);
    const list = (await t.api('GET', '/api/workflows')).body.workflows as Array<{ id: string; plan: { steps: unknown[] } }>;
    expect(list).toHaveLength(1);
    expect(list[0]?.plan.steps).toHaveLength(3);
    expect(await page.getByTestId('unsaved').count()).toBe(0);
    expect(await page.locator('.vue-flow__node').count()).toBe(4);
    await u.shot('builder-ai-panel-applied');

    // one Undo reverts the whole proposal
    await page.getByTestId('undo').click();
    await expect.poll(() => page.locator('.vue-flow__node').count()).toBe(1);
    await page.getByTestId('redo').click();
    await expect.poll(() => page.locator('.vue-flow__node').count()).toBe(4);
  });

  it('refuses a stale proposal after a manual edit, and dismissing changes nothing', async () => {
    const { page } = u;
    script([
      { toolCalls: [{ name: 'edit_current_flow', arguments: { steps: [...STEPS, { id: 'fourth', tool: 'echo', arguments: { value: '{{node.third.result}}' }, dependsOn: ['third'] }], summary: 'One more echo' } }] },
      { text: 'Added a fourth step.' },
    ]);
    await ask('Add a fourth echo');
    await page.getByTestId('ai-panel-proposal').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('diff-node-fourth').getAttribute('data-mark')).toBe('added');
    expect(await page.getByTestId('diff-node-first').getAttribute('data-mark')).toBe('same');
    await page.getByTestId('add-note').click(); // a manual edit while the proposal is open
    await page.getByTestId('ai-panel-apply').click();
    await page.getByTestId('ai-panel-stale').waitFor();
    expect(await page.getByTestId('ai-panel-proposal').getAttribute('data-state')).toBe('stale');
    await u.shot('builder-ai-panel-stale');
    await page.getByTestId('ai-panel-dismiss').click();
    await expect.poll(() => page.getByTestId('ai-panel-proposal').count()).toBe(0);
    // the canvas is the user's again: 4 nodes + the note, no fourth step
    await expect.poll(() => page.locator('.vue-flow__node').count()).toBe(5);
  });

  it('runs the current flow (auto-saving the pending edit first) and streams the tool events', async () => {
    const { page } = u;
    script([{ toolCalls: [{ name: 'run_current_flow', arguments: { topic: 'hello from the panel' } }] }, { text: 'The flow ran and echoed your topic.' }]);
    await ask('Run it with topic "hello from the panel"');
    const tool = page.locator('[data-testid="ai-panel-tool"][data-tool="run_current_flow"]');
    await tool.waitFor({ timeout: 20_000 });
    await expect.poll(() => tool.innerText(), { timeout: 30_000 }).toContain('hello from the panel');
    await expect.poll(() => page.getByTestId('ai-panel-answer').last().innerText(), { timeout: 20_000 }).toContain('echoed your topic');
    // the pending note was auto-saved before the run: nothing is unsaved any more
    expect(await page.getByTestId('unsaved').count()).toBe(0);
    await u.shot('builder-ai-panel-run');
  });
});
