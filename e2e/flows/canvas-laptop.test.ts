import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FlowsE2E, startFlowsE2E } from './harness';

/**
 * The builder on a 1280×800 laptop screen: the canvas keeps at least 60% of the width by default,
 * the side panels collapse and resize (and remember it across reloads), the minimap never
 * overlaps the controls and stays out of the bottom-right corner; a large flow opens at a readable
 * zoom (≥ 75%) at its start, and the fit-view button frames it below 50%. By keyboard: palette
 * items and nodes are in the Tab order, Enter adds an item or opens a node's settings, a focused
 * node shows a ring, the canvas buttons are named (en, zh-CN); a new flow shows the palette and
 * the templates; deleting a selected edge never deletes a node just added.
 */

let e: FlowsE2E;
let page: Page;
let flowId = '';

type Box = { x: number; y: number; width: number; height: number };
const intersects = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const box = async (selector: string) => {
  const b = await page.locator(selector).boundingBox();
  if (!b) throw new Error(`${selector} is not shown`);
  return b;
};
const canvasWidth = async () => (await box('[data-testid="canvas"]')).width;
const zoom = () => page.evaluate(() => new DOMMatrixReadOnly(getComputedStyle(document.querySelector('.vue-flow__transformationpane') as Element).transform).a);

/** The minimap (when shown) and the controls never overlap, and the minimap keeps off the bottom-right corner. */
async function checkCorners() {
  const controls = await box('.fy-controls');
  const canvas = await box('[data-testid="canvas"]');
  expect(Math.abs(controls.x + controls.width / 2 - (canvas.x + canvas.width / 2))).toBeLessThan(20);
  if ((await page.locator('.fy-minimap').count()) === 0) return false;
  const minimap = await box('.fy-minimap');
  expect(intersects(minimap, controls), JSON.stringify({ minimap, controls })).toBe(false);
  expect(minimap.x + minimap.width).toBeLessThan(canvas.x + canvas.width / 2);
  return true;
}

beforeAll(async () => {
  e = await startFlowsE2E();
  // a long chain: wide enough that framing it needs less than 50% zoom
  const steps = Array.from({ length: 24 }, (_, i) => ({ id: `s${i + 1}`, title: `Step ${i + 1}`, tool: 'echo', arguments: { text: `${i}` }, ...(i ? { dependsOn: [`s${i}`] } : {}) }));
  const created = await e.t.api('POST', '/api/workflows', { name: 'A long chain', plan: { steps } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  flowId = created.body.id;
  page = await e.context.newPage();
  await page.setViewportSize({ width: 1280, height: 800 });
  // leaving a flow edited by a test discards the edits
  page.on('dialog', (d) => void d.accept().catch(() => {}));
}, 240_000);

afterAll(async () => {
  await page?.close().catch(() => {});
  await e?.close();
});

async function openFlow() {
  await page.goto(e.url(`/flows/${encodeURIComponent(flowId)}`));
  await page.locator('.fy-node[data-node-id="s24"]').waitFor({ state: 'attached' });
  await page.locator('.fy-controls').waitFor();
}

it('gives the canvas at least 60% of a 1280 px window, opens a large flow readably at its start, frames it below 50% on request and keeps the minimap clear of the controls', async () => {
  await openFlow();
  expect(await page.evaluate(() => localStorage.getItem('fengyu.builder.layout'))).toBeNull(); // a first visit: the defaults
  expect(await canvasWidth()).toBeGreaterThanOrEqual(0.6 * 1280);
  await page.getByTestId('palette-rail').waitFor();
  // opened: never below the readable floor, the start node in view near the left edge
  await expect.poll(zoom).toBe(0.75);
  const opened = await box('[data-testid="canvas"]');
  const start = await box('.fy-node[data-node-id="start"]');
  expect(start.x).toBeGreaterThanOrEqual(opened.x);
  expect(start.x).toBeLessThan(opened.x + 100);
  expect(start.y).toBeGreaterThan(opened.y);
  await e.shot(page, 'builder-1280-opened');
  // the fit-view button shows all of it
  await page.getByTestId('fit-view').click();
  await expect.poll(zoom).toBeLessThan(0.5);
  expect(await zoom()).toBeGreaterThan(0);
  expect(await checkCorners()).toBe(true);
  // the whole chain is inside the canvas after fit-view
  const canvas = await box('[data-testid="canvas"]');
  for (const id of ['start', 's24']) {
    const n = await box(`.fy-node[data-node-id="${id}"]`);
    expect(n.x).toBeGreaterThanOrEqual(canvas.x);
    expect(n.x + n.width).toBeLessThanOrEqual(canvas.x + canvas.width);
  }
  await e.shot(page, 'builder-1280');
});

it('collapses and resizes the side panels, and remembers the choice after a reload', async () => {
  await openFlow();
  const before = await canvasWidth();
  await page.getByTestId('side-collapse').click();
  await expect.poll(canvasWidth).toBeGreaterThan(before + 200);
  await openFlow();
  expect(await page.getByTestId('side-expand').isVisible()).toBe(true);
  await page.getByTestId('side-expand').click();
  await page.getByTestId('tab-config').waitFor();

  // drag the side panel's edge 120 px to the left: the panel widens by 120
  const side = (await box('[data-testid="side-panel"]')).width;
  const handle = await box('[data-testid="side-resizer"]');
  await page.mouse.move(handle.x + handle.width / 2, handle.y + 200);
  await page.mouse.down();
  await page.mouse.move(handle.x + handle.width / 2 - 60, handle.y + 200, { steps: 4 });
  await page.mouse.move(handle.x + handle.width / 2 - 120, handle.y + 200, { steps: 4 });
  await page.mouse.up();
  await expect.poll(async () => (await box('[data-testid="side-panel"]')).width).toBeCloseTo(side + 120, 0);
  await openFlow();
  expect((await box('[data-testid="side-panel"]')).width).toBeCloseTo(side + 120, 0);

  // open the palette and drag the side panel as wide as it goes: the canvas keeps its minimum,
  // and the minimap gives way rather than overlap the controls
  await page.getByTestId('palette-expand').click();
  await page.getByTestId('palette').waitFor();
  const h2 = await box('[data-testid="side-resizer"]');
  await page.mouse.move(h2.x + h2.width / 2, h2.y + 200);
  await page.mouse.down();
  await page.mouse.move(100, h2.y + 200, { steps: 8 });
  await page.mouse.up();
  await expect.poll(canvasWidth).toBeLessThan(560);
  expect(await canvasWidth()).toBeGreaterThanOrEqual(480);
  expect(await checkCorners()).toBe(false);
  // and the keyboard resizes the panel too (the handle is a focusable separator)
  const wide = (await box('[data-testid="side-panel"]')).width;
  await page.getByTestId('side-resizer').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect.poll(async () => (await box('[data-testid="side-panel"]')).width).toBeCloseTo(wide - 32, 0);
  expect(await checkCorners()).toBe(false);
  // collapsing the palette again brings the minimap back, still clear of the controls
  await page.getByTestId('palette-collapse').click();
  await page.getByTestId('palette-rail').waitFor();
  await page.getByTestId('side-collapse').click();
  await expect.poll(() => page.locator('.fy-minimap').count()).toBe(1);
  expect(await checkCorners()).toBe(true);
});

it('shows a step result readably at 1280×800: rows as a table, markdown rendered, a resizable and enlargeable box', async () => {
  const rows = [
    { name: 'invoices-North.xlsx', value: 'North', rowCount: 30 },
    { name: 'invoices-South.xlsx', value: 'South', rowCount: 12 },
  ];
  const plan = { steps: [{ id: 'rows', title: 'Rows', tool: 'echo', arguments: { value: rows } }, { id: 'note', title: 'Note', tool: 'echo', arguments: { value: '## Done\n\n- **2** workbooks written' }, dependsOn: ['rows'] }] };
  const flow = (await e.t.api('POST', '/api/workflows', { name: 'Results', plan })).body;
  const run = await e.t.api('POST', `/api/workflows/${flow.id}/run`, { config: { permissionMode: 'full-access' } });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  await e.t.stream(run.body.runId);
  await page.goto(e.url(`/flows/${encodeURIComponent(flow.id)}?run=${encodeURIComponent(run.body.runId)}`));
  await expect.poll(() => page.locator('.fy-node[data-node-id="rows"]').getAttribute('data-badge'), { timeout: 20_000 }).toBe('done');
  await page.locator('.fy-node[data-node-id="rows"] .fy-label').click();
  await page.getByTestId('tab-config').click();
  const resultBox = page.getByTestId('result-box');
  await resultBox.waitFor();
  const table = resultBox.getByTestId('result-table');
  await table.waitFor();
  expect(await table.locator('th').allTextContents()).toEqual(['#', 'name', 'value', 'rowCount']);
  expect(await table.locator('tbody tr').count()).toBe(2);
  // the box takes the panel's width, not a narrow column
  const side = await box('[data-testid="side-panel"]');
  const body = await box('[data-testid="result-body"]');
  expect(body.width).toBeGreaterThan(0.8 * side.width - 40);
  // drag the bottom-right corner down: the box grows
  await page.getByTestId('result-body').scrollIntoViewIfNeeded();
  const b = await box('[data-testid="result-body"]');
  await page.mouse.move(b.x + b.width - 3, b.y + b.height - 3);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width - 3, b.y + b.height + 60, { steps: 5 });
  await page.mouse.up();
  await expect.poll(async () => (await box('[data-testid="result-body"]')).height).toBeGreaterThan(b.height + 40);
  // enlarged over the page, and back
  await resultBox.getByTestId('result-enlarge').click();
  await expect.poll(async () => (await box('[data-testid="result-box"]')).width).toBeGreaterThan(0.8 * 1280);
  await e.shot(page, 'output-viewer-large');
  await resultBox.getByTestId('result-enlarge').click();
  await expect.poll(async () => (await box('[data-testid="result-box"]')).width).toBeLessThan(side.width);
  // markdown text is rendered
  // the AI panel (docked bottom-right over the canvas) may be open; it is not what this test reads
  if (await page.getByTestId('ai-panel-collapse').count()) await page.getByTestId('ai-panel-collapse').click();
  await page.locator('.fy-node[data-node-id="note"] .fy-label').click();
  const echoed = page.getByTestId('result-box').locator('[data-key="echoed"]');
  await expect.poll(() => echoed.locator('h2').textContent()).toBe('Done');
  expect(await echoed.locator('strong').textContent()).toBe('2');
});

it.each(['en', 'zh-CN'] as const)('works by keyboard at 1280×800 and offers the palette and templates on a new flow (%s)', async (locale) => {
  await page.goto('about:blank'); // a fresh load (the same address again would only change the hash)
  await page.goto(e.url('/flows/new'));
  await page.locator('.fy-node[data-node-id="start"]').waitFor();
  await page.getByTestId('locale').selectOption(locale);
  await expect.poll(() => page.locator('html').getAttribute('lang')).toBe(locale);
  // the hint says "drag from the palette": the palette is open, and the templates are offered
  await page.getByTestId('palette').waitFor();
  await page.getByTestId('empty-templates').locator('[data-template-id="excel-split-email"]').waitFor();
  // the canvas buttons have names in the UI's language
  const names = await page.locator('.fy-controls button').evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-label')));
  expect(names).toEqual(locale === 'en' ? ['Zoom in', 'Zoom out', 'Fit the whole flow in view', 'Snap to grid', 'Show the dot grid'] : ['放大', '缩小', '缩放以显示整个流程', '吸附到网格', '显示点状网格']);
  // the narrow sidebar's language select shows its whole value
  const fits = await page.getByTestId('locale').evaluate((el) => {
    const select = el as HTMLSelectElement;
    const probe = document.createElement('span');
    probe.style.font = getComputedStyle(select).font;
    probe.textContent = select.selectedOptions[0]?.textContent ?? '';
    document.body.append(probe);
    const width = probe.getBoundingClientRect().width;
    probe.remove();
    const style = getComputedStyle(select);
    const arrow = style.appearance === 'none' ? 0 : 20;
    return width <= select.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight) - arrow;
  });
  expect(fits).toBe(true);
  await e.shot(page, `builder-new-${locale}`);

  // Tab reaches the palette's items; Enter adds one
  await page.getByTestId('palette-search').focus();
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => document.activeElement?.getAttribute('data-palette-item'))) === 'excel_analyze') break;
  }
  expect(await page.evaluate(() => document.activeElement?.getAttribute('data-palette-item'))).toBe('excel_analyze');
  await page.keyboard.press('Enter');
  await page.locator('.fy-node[data-node-id="excel_analyze"]').waitFor();
  await page.getByTestId('empty-canvas').waitFor({ state: 'detached' });

  // a focused node shows a ring, and Enter opens its settings (from the Run tab too)
  await page.getByTestId('tab-run').click();
  const node = page.locator('.vue-flow__node[data-id="excel_analyze"]');
  await page.locator('.vue-flow__node[data-id="start"]').focus();
  await page.keyboard.press('Tab');
  expect(await node.evaluate((el) => el === document.activeElement)).toBe(true);
  expect(await node.evaluate((el) => getComputedStyle(el.firstElementChild as Element).outlineStyle)).toBe('solid');
  await page.keyboard.press('Enter');
  await page.getByTestId('config-panel').locator('[data-arg="filePath"]').waitFor();
  // an unnamed node is named once: its label on the card, the tool id (its node id) once in the panel
  expect(await page.locator('.fy-node[data-node-id="excel_analyze"] .fy-label').textContent()).toBe(locale === 'en' ? 'Analyze workbook' : '分析工作簿');
  expect(await page.getByTestId('node-kind').textContent()).toBe('excel_analyze');
  // the source switch of an argument is not clipped ("Expressio")
  const clipped = await page.locator('[data-arg="filePath"] .sources').evaluate((el) => el.scrollWidth > el.clientWidth);
  expect(clipped).toBe(false);
  await e.shot(page, `builder-keyboard-${locale}`);
});

it('deletes only the selected edge, not a node just added (Delete key)', async () => {
  await openFlow();
  if (await page.getByTestId('palette-expand').count()) await page.getByTestId('palette-expand').click();
  // a node added from the palette becomes the current node
  await page.locator('[data-palette-item="model"]').click();
  await page.locator('.fy-node[data-node-id="model"]').waitFor();
  const edges = await page.locator('.fy-edge').count();
  // select the start → s1 edge by clicking its line (a quarter along, clear of the midpoint's delete button)
  const at = await page.evaluate(() => {
    const paths = [...document.querySelectorAll<SVGPathElement>('.fy-edge[data-edge-id] .fy-edge-path')];
    const path = paths.find((p) => p.closest('.fy-edge')?.getAttribute('data-edge-id')?.includes('start')) as SVGPathElement;
    const pt = path.getPointAtLength(path.getTotalLength() * 0.25);
    const m = path.getScreenCTM() as DOMMatrix;
    return { x: pt.x * m.a + m.e, y: pt.y * m.d + m.f };
  });
  await page.mouse.click(at.x, at.y);
  await expect.poll(() => page.locator('.vue-flow__edge.selected').count()).toBe(1);
  await page.keyboard.press('Delete');
  await expect.poll(() => page.locator('.fy-edge').count()).toBe(edges - 1);
  expect(await page.locator('.fy-node[data-node-id="model"]').count()).toBe(1);
});
