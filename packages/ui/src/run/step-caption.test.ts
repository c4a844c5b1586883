import { describe, expect, it } from 'vitest';
import { stepCaption } from './step-caption';

describe('stepCaption', () => {
  it('names an unnamed step by its id once when the id is its tool', () => {
    expect(stepCaption({ id: 'excel_analyze', tool: 'excel_analyze' })).toEqual({ title: 'excel_analyze' });
    expect(stepCaption({ id: 'excel_analyze', title: '', tool: 'excel_analyze' })).toEqual({ title: 'excel_analyze' });
  });
  it('keeps the tool beside a title or an id that differs from it', () => {
    expect(stepCaption({ id: 'analyze', title: 'Analyze workbook', tool: 'excel_analyze' })).toEqual({ title: 'Analyze workbook', tool: 'excel_analyze' });
    expect(stepCaption({ id: 'excel_analyze_2', tool: 'excel_analyze' })).toEqual({ title: 'excel_analyze_2', tool: 'excel_analyze' });
    expect(stepCaption({ id: 'think' })).toEqual({ title: 'think' });
  });
});
