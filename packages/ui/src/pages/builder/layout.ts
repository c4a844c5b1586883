/**
 * The builder's panel layout: the node palette (left) and the config/run panel (right) can each
 * be collapsed to a rail or resized by dragging their inner edge; the choice is remembered.
 * Defaults keep the canvas at least 60% of the window: the palette starts open only when the
 * canvas keeps that share with it open. Any width is clamped so the canvas never gets narrower
 * than MIN_CANVAS.
 */

export interface PanelLayout {
  paletteOpen: boolean;
  paletteWidth: number;
  sideOpen: boolean;
  sideWidth: number;
}

export const LAYOUT_KEY = 'fengyu.builder.layout';
/** Width of a collapsed panel's rail. */
export const RAIL = 44;
export const MIN_CANVAS = 480;
export const PALETTE = { min: 180, max: 420, initial: 240 } as const;
export const SIDE = { min: 280, max: 640, initial: 360 } as const;
/** The canvas's share of the window that the default layout keeps. */
export const CANVAS_SHARE = 0.6;

/** `workspace`: the width the builder's panels and canvas share (the window minus the app navigation). */
export function defaultLayout(windowWidth: number, workspace: number): PanelLayout {
  const canvas = CANVAS_SHARE * windowWidth;
  const paletteOpen = workspace - PALETTE.initial - SIDE.initial >= canvas;
  // on a small window the side panel starts narrower (never under its minimum)
  const sideWidth = clamp(Math.floor(Math.min(SIDE.initial, workspace - canvas - (paletteOpen ? PALETTE.initial : RAIL))), SIDE.min, SIDE.max);
  return { paletteOpen, paletteWidth: PALETTE.initial, sideOpen: true, sideWidth };
}

const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** A stored layout (any JSON) read back over the defaults; unknown or broken values fall back. */
export function readLayout(raw: string | null, windowWidth: number, workspace: number): PanelLayout {
  const base = defaultLayout(windowWidth, workspace);
  let stored: Record<string, unknown> = {};
  try {
    const parsed = raw ? JSON.parse(raw) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) stored = parsed;
  } catch {}
  return {
    paletteOpen: typeof stored.paletteOpen === 'boolean' ? stored.paletteOpen : base.paletteOpen,
    paletteWidth: clamp(num(stored.paletteWidth, base.paletteWidth), PALETTE.min, PALETTE.max),
    sideOpen: typeof stored.sideOpen === 'boolean' ? stored.sideOpen : base.sideOpen,
    sideWidth: clamp(num(stored.sideWidth, base.sideWidth), SIDE.min, SIDE.max),
  };
}

function clamp(v: number, min: number, max: number): number {
  return Math.round(Math.min(max, Math.max(min, v)));
}

/**
 * The widths actually shown in a workspace `available` px wide: each open panel keeps its chosen
 * width unless the canvas would drop under MIN_CANVAS, in which case the panels give way
 * (the side panel first, down to its minimum, then the palette).
 */
export function shownWidths(l: PanelLayout, available: number): { palette: number; side: number; canvas: number } {
  let palette = l.paletteOpen ? l.paletteWidth : RAIL;
  let side = l.sideOpen ? l.sideWidth : RAIL;
  let over = palette + side + MIN_CANVAS - available;
  if (over > 0 && l.sideOpen) {
    const give = Math.min(over, side - SIDE.min);
    side -= give;
    over -= give;
  }
  if (over > 0 && l.paletteOpen) palette -= Math.min(over, palette - PALETTE.min);
  return { palette, side, canvas: Math.max(0, available - palette - side) };
}

/** The width a drag of a panel's inner edge asks for, within the panel's bounds and the canvas minimum. */
export function resized(l: PanelLayout, panel: 'palette' | 'side', width: number, available: number): number {
  const bounds = panel === 'palette' ? PALETTE : SIDE;
  const other = panel === 'palette' ? (l.sideOpen ? l.sideWidth : RAIL) : l.paletteOpen ? l.paletteWidth : RAIL;
  return clamp(Math.min(width, available - other - MIN_CANVAS), bounds.min, bounds.max);
}

/** The minimap's size and the canvas panels' inset from the canvas edge. */
export const MINIMAP = { width: 160, height: 110 } as const;
export const PANEL_INSET = 15;

/**
 * The minimap sits bottom-left (bottom-right stays free for docked panels) and the controls
 * bottom-centre: the minimap shows only while at least 8 px separate it from the controls.
 */
export function minimapFits(canvasWidth: number, controlsWidth: number, minimapWidth: number = MINIMAP.width): boolean {
  const minimapRight = PANEL_INSET + minimapWidth + 2; // its 1 px border on both sides
  const controlsLeft = (canvasWidth - controlsWidth) / 2;
  return minimapRight + 8 <= controlsLeft;
}

/** The lowest zoom a flow opens at: node text (9–13 px in CSS) stays legible on screen. */
export const READABLE_ZOOM = 0.75;
/** Where the first node lands when a flow is too large to frame readably. */
export const START_INSET = 40;

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

/**
 * The view a flow opens at: the fitted view when it is readable; otherwise READABLE_ZOOM with
 * the start node (`anchor`, in flow coordinates) START_INSET from the canvas's left edge and
 * vertically centred, so the reader begins where the flow begins and pans from there.
 */
export function readableViewport(fitted: Viewport, anchor: { x: number; y: number; height: number } | undefined, canvas: { width: number; height: number }): Viewport {
  if (fitted.zoom >= READABLE_ZOOM || !anchor) return fitted;
  const zoom = READABLE_ZOOM;
  return { zoom, x: START_INSET - anchor.x * zoom, y: canvas.height / 2 - (anchor.y + anchor.height / 2) * zoom };
}
