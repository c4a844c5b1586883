import { describe, expect, it } from 'vitest';
import { analyzedSheets, analyzePlan, widgetChoices } from './workbook-analyze';

const result = {
  success: true,
  summary: '2 sheets',
  sheets: [
    { name: 'Invoices', rowCount: 24, columns: [{ name: 'Region', type: 'text', distinct: 4 }, { name: 'Amount', type: 'number', distinct: 20 }, { name: 'Region' }] },
    { name: 'Notes', rowCount: 1, columns: [{ name: 'Text' }] },
  ],
};

describe('workbook analyze widget', () => {
  it('analyzes the sample as the granted file input with the Excel read tool', () => {
    expect(analyzePlan('Analyze')).toEqual({ steps: [{ id: 'analyze', title: 'Analyze', tool: 'excel_analyze', arguments: { filePath: '@file:workbook' } }] });
  });
  it('offers sheet names, or the column names of the first (or a chosen) sheet, once each', () => {
    const sheets = analyzedSheets(result);
    expect(widgetChoices(sheets, 'workbook-sheet')).toEqual(['Invoices', 'Notes']);
    expect(widgetChoices(sheets, 'workbook-column')).toEqual(['Region', 'Amount']);
    expect(widgetChoices(sheets, 'workbook-columns', 'Notes')).toEqual(['Text']);
    expect(widgetChoices(sheets, 'workbook-column', 'Missing')).toEqual(['Region', 'Amount']);
  });
  it('reads nothing usable out of a malformed result', () => {
    for (const bad of [null, 'x', { sheets: 'no' }, { sheets: [null, 3, { columns: [] }] }]) expect(analyzedSheets(bad)).toEqual([]);
    expect(analyzedSheets({ sheets: [{ name: 'S', columns: [null, 1, '', { name: 5 }, { name: 'ok' }] }] })).toEqual([{ name: 'S', columns: ['ok'] }]);
    expect(widgetChoices([], 'workbook-column')).toEqual([]);
  });
});
