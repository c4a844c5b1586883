import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mailPreview } from './gate-preview';

const prepared = {
  confirmation: { confirmationId: 'c1', messageCount: 2 },
  preview: [
    { index: 0, value: 'North', to: ['ana@example.com'], cc: [], subject: 'Sales North', attachment: { name: 'North.xlsx', bytes: 10 } },
    { index: 1, value: 'South', to: ['bo@example.com', 'cy@example.com'], cc: ['boss@example.com'], subject: 'Sales South', attachment: null },
  ],
};

describe('mailPreview', () => {
  it('shows who gets what for a send step from the prepare step of the same batch', () => {
    expect(mailPreview({ confirmationId: 'c1' }, [{ result: { other: 1 } }, { result: prepared }])).toEqual({
      lines: [
        { to: ['ana@example.com'], cc: [], subject: 'Sales North', attachment: 'North.xlsx' },
        { to: ['bo@example.com', 'cy@example.com'], cc: ['boss@example.com'], subject: 'Sales South' },
      ],
      more: 0,
    });
    expect(mailPreview({ confirmationId: 'other' }, [{ result: prepared }])).toBeUndefined();
  });

  it('shows the resolved recipients, subject and files of a prepare step', () => {
    expect(mailPreview({ recipients: 'ana@example.com; bo@example.com', subject: 'Sales {value}', files: [{ name: 'North.xlsx', path: '/x/North.xlsx' }, '/x/South.xlsx'] }, [])).toEqual({
      lines: [
        { to: ['ana@example.com', 'bo@example.com'], cc: [], subject: 'Sales {value}', attachment: 'North.xlsx' },
        { to: ['ana@example.com', 'bo@example.com'], cc: [], subject: 'Sales {value}', attachment: 'South.xlsx' },
      ],
      more: 0,
    });
  });

  it('is undefined for other steps and never throws on any arguments or results (property)', () => {
    expect(mailPreview({ path: '/x' }, [])).toBeUndefined();
    fc.assert(
      fc.property(fc.anything(), fc.array(fc.record({ result: fc.anything() })), (args, steps) => {
        const p = mailPreview(args, steps);
        return p === undefined || (p.lines.length <= 20 && p.more >= 0);
      }),
    );
  });
});
