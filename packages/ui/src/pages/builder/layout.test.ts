import { describe, expect, it } from 'vitest';
import { defaultLayout, MIN_CANVAS, minimapFits, PALETTE, RAIL, READABLE_ZOOM, readableViewport, readLayout, resized, SIDE, START_INSET, shownWidths } from './layout';

const NAV = 57; // the builder's compact app navigation

describe('builder panel layout', () => {
  it('keeps the canvas at least 60% of a 1280 px window by default', () => {
    const l = defaultLayout(1280, 1280 - NAV);
    expect(l.paletteOpen).toBe(false);
    const w = shownWidths(l, 1280 - NAV);
    expect(w.canvas / 1280).toBeGreaterThanOrEqual(0.6);
  });

  it('opens the palette by default only where the canvas keeps 60% with it', () => {
    for (const w of [1024, 1280, 1440, 1600, 1680, 1920, 2560]) {
      const l = defaultLayout(w, w - NAV);
      expect(shownWidths(l, w - NAV).canvas / w, `${w}`).toBeGreaterThanOrEqual(0.6);
      if (w >= 1680) expect(l.paletteOpen, `${w}`).toBe(true);
    }
    const l = defaultLayout(1920, 1920 - NAV);
    expect(l.paletteOpen).toBe(true);
    expect(shownWidths(l, 1920 - NAV).canvas / 1920).toBeGreaterThanOrEqual(0.6);
  });

  it('reads a stored choice back and falls back on broken values', () => {
    expect(readLayout(JSON.stringify({ paletteOpen: true, sideWidth: 500, sideOpen: false }), 1280, 1280 - NAV)).toEqual({ paletteOpen: true, paletteWidth: PALETTE.initial, sideOpen: false, sideWidth: 500 });
    expect(readLayout('{not json', 1280, 1280 - NAV)).toEqual(defaultLayout(1280, 1280 - NAV));
    expect(readLayout(JSON.stringify({ sideWidth: 99999, paletteWidth: 'wide', paletteOpen: 'yes' }), 1280, 1280 - NAV)).toEqual({ ...defaultLayout(1280, 1280 - NAV), sideWidth: SIDE.max });
    expect(readLayout('[1,2]', 1920, 1920 - NAV)).toEqual(defaultLayout(1920, 1920 - NAV));
  });

  it('gives way so the canvas never drops under its minimum', () => {
    const l = { paletteOpen: true, paletteWidth: PALETTE.max, sideOpen: true, sideWidth: SIDE.max };
    const w = shownWidths(l, 1000);
    expect(w.canvas).toBeGreaterThanOrEqual(MIN_CANVAS);
    expect(w.side).toBe(SIDE.min);
    expect(w.palette + w.side + w.canvas).toBe(1000);
    expect(shownWidths({ ...l, paletteOpen: false, sideOpen: false }, 1000)).toEqual({ palette: RAIL, side: RAIL, canvas: 1000 - 2 * RAIL });
  });

  it('clamps a drag to the panel bounds and the canvas minimum', () => {
    const l = defaultLayout(1280, 1280 - NAV);
    expect(resized(l, 'side', 50, 1223)).toBe(SIDE.min);
    expect(resized(l, 'side', 1000, 1100)).toBe(1100 - RAIL - MIN_CANVAS);
    expect(resized(l, 'side', 2000, 1800)).toBe(SIDE.max);
    expect(resized(l, 'side', 400, 1223)).toBe(400);
    expect(resized({ ...l, paletteOpen: true }, 'palette', 300, 1600)).toBe(300);
  });
});

describe('minimap beside the controls', () => {
  it('shows the minimap only when it stays clear of the centred controls', () => {
    expect(minimapFits(800, 170)).toBe(true);
    expect(minimapFits(MIN_CANVAS, 170)).toBe(false);
    // the boundary: right edge + 8 px gap equals the controls' left edge
    const w = 2 * (15 + 160 + 2 + 8) + 170;
    expect(minimapFits(w, 170)).toBe(true);
    expect(minimapFits(w - 1, 170)).toBe(false);
  });

  it('opens a flow at the fitted view when it is readable, else at the readable zoom from its start', () => {
    const canvas = { width: 800, height: 700 };
    const fitted = { x: 10, y: 20, zoom: 0.9 };
    expect(readableViewport(fitted, { x: 0, y: 0, height: 60 }, canvas)).toBe(fitted);
    const big = readableViewport({ x: 5, y: 5, zoom: 0.39 }, { x: 100, y: 200, height: 80 }, canvas);
    expect(big.zoom).toBe(READABLE_ZOOM);
    // the start's left edge lands START_INSET from the canvas's left, its middle at mid-height
    expect(100 * big.zoom + big.x).toBeCloseTo(START_INSET);
    expect((200 + 40) * big.zoom + big.y).toBeCloseTo(canvas.height / 2);
    // no node to anchor: the fitted view stays
    expect(readableViewport({ x: 0, y: 0, zoom: 0.2 }, undefined, canvas).zoom).toBe(0.2);
  });
});
