/** MUI's color manipulation formulas (as the Flowise canvas uses them), for #rrggbb colors. */

function rgb(hex: string): [number, number, number] {
  const h = hex.replace('#', '');
  const full = h.length === 3 ? h.split('').map((c) => c + c).join('') : h.padEnd(6, '0');
  return [0, 2, 4].map((i) => Number.parseInt(full.slice(i, i + 2), 16) || 0) as [number, number, number];
}

const hex = (n: number) => Math.round(Math.min(255, Math.max(0, n))).toString(16).padStart(2, '0');

/** MUI darken: each channel × (1 − coefficient). */
export function darken(color: string, coefficient: number): string {
  const [r, g, b] = rgb(color);
  const k = 1 - coefficient;
  return `#${hex(r * k)}${hex(g * k)}${hex(b * k)}`;
}

/** MUI lighten: each channel + (255 − channel) × coefficient. */
export function lighten(color: string, coefficient: number): string {
  const [r, g, b] = rgb(color);
  return `#${hex(r + (255 - r) * coefficient)}${hex(g + (255 - g) * coefficient)}${hex(b + (255 - b) * coefficient)}`;
}

export function alpha(color: string, value: number): string {
  const [r, g, b] = rgb(color);
  return `rgba(${r}, ${g}, ${b}, ${value})`;
}
