import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { producedFiles } from './run-outputs';

describe('producedFiles', () => {
  it('lists the files written and the outbox messages, by step, each once', () => {
    const steps = [
      { id: 'split', title: 'Split by region', status: 'done', result: { outputDirectory: '/h/runs/r1/shared/out', files: [{ name: 'North.xlsx', path: '/h/runs/r1/shared/out/North.xlsx', value: 'North', rowCount: 2 }, { name: 'South.xlsx', path: '/h/runs/r1/shared/out/South.xlsx' }] } },
      { id: 'prepare', status: 'done', result: { preview: [{ attachment: { name: 'North.xlsx', bytes: 3 } }], note: { name: 'x', path: 'relative/x' } } },
      { id: 'send', title: 'Send', status: 'done', result: { messages: [{ status: 'sent', response: 'written to /h/plugins/email/outbox/0001.eml' }] } },
      { id: 'failed', status: 'failed', result: { files: [{ name: 'Gone.xlsx', path: '/h/gone.xlsx' }] } },
    ];
    const out = producedFiles(steps);
    expect(out.files).toEqual([
      { stepId: 'split', stepTitle: 'Split by region', name: 'North.xlsx', path: '/h/runs/r1/shared/out/North.xlsx' },
      { stepId: 'split', stepTitle: 'Split by region', name: 'South.xlsx', path: '/h/runs/r1/shared/out/South.xlsx' },
    ]);
    expect(out.outbox).toEqual([{ stepId: 'send', stepTitle: 'Send', name: '0001.eml', path: '/h/plugins/email/outbox/0001.eml' }]);
  });

  it('never throws and stays bounded on any results (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ id: fc.string(), result: fc.anything() })), (steps) => {
        const out = producedFiles(steps);
        return out.files.length <= 100 && out.outbox.length <= 100;
      }),
    );
  });
});
