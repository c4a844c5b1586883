import type { AgentPlan } from '@fengyu/protocol';

/**
 * The "workbook analyze" manual widget's pure part (the seed's node panel: "Manual — the widget
 * form (…, workbook analyze…)"): the one-step plan that analyzes a sample workbook with the Excel
 * plugin's read tool, and the choices its result offers an input declared with `widget`.
 */

export const ANALYZE_TOOL = 'excel_analyze';
/** The run's file input the sample workbook is granted as. */
export const SAMPLE_INPUT = 'workbook';

export function analyzePlan(title: string): AgentPlan {
  return { steps: [{ id: 'analyze', title, tool: ANALYZE_TOOL, arguments: { filePath: `@file:${SAMPLE_INPUT}` } }] };
}

export interface AnalyzedSheet {
  name: string;
  columns: string[];
}

/** The sheets and their column names in an `excel_analyze` result; anything else is skipped. */
export function analyzedSheets(result: unknown): AnalyzedSheet[] {
  const sheets = result && typeof result === 'object' ? (result as { sheets?: unknown }).sheets : undefined;
  if (!Array.isArray(sheets)) return [];
  const out: AnalyzedSheet[] = [];
  for (const s of sheets) {
    if (!s || typeof s !== 'object' || typeof (s as { name?: unknown }).name !== 'string') continue;
    const cols = (s as { columns?: unknown }).columns;
    const columns = Array.isArray(cols) ? cols.map((c) => (c && typeof c === 'object' ? (c as { name?: unknown }).name : c)).filter((n): n is string => typeof n === 'string' && n !== '') : [];
    out.push({ name: (s as { name: string }).name, columns });
  }
  return out;
}

/** What the widget offers: sheet names, or the column names of `sheet` (default the first sheet). */
export function widgetChoices(sheets: readonly AnalyzedSheet[], widget: string, sheet?: string): string[] {
  if (widget === 'workbook-sheet') return sheets.map((s) => s.name);
  const from = sheets.find((s) => s.name === sheet) ?? sheets[0];
  return from ? [...new Set(from.columns)] : [];
}
