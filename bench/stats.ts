/** Small statistics helpers shared by the benchmarks. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (s[lo] as number) + ((s[hi] as number) - (s[lo] as number)) * (pos - lo);
}

export const median = (v: number[]) => quantile(v, 0.5);
export const p99 = (v: number[]) => quantile(v, 0.99);
export const fmt = (n: number, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
