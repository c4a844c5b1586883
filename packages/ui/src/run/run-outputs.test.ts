import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { producedFiles } from './run-outputs';

describe('producedFiles', () => {
  it('lists the files written, each once, and the messages sent, by step', () => {
    const steps = [
      { id: 'split', title: 'Split by region', status: 'done', result: { outputDirectory: '/h/runs/r1/shared/out', files: [{ name: 'North.xlsx', path: '/h/runs/r1/shared/out/North.xlsx', value: 'North', rowCount: 2 }, { name: 'South.xlsx', path: '/h/runs/r1/shared/out/South.xlsx' }] } },
      { id: 'prepare', status: 'done', result: { preview: [{ attachment: { name: 'North.xlsx', bytes: 3 } }], note: { name: 'x', path: 'relative/x' } } },
      { id: 'send', title: 'Send', status: 'done', result: { summary: 'Sent 1 of 1 message(s).', messages: [{ index: 0, value: 'North', to: ['ana@example.com'], subject: 'Sales North', status: 'sent', messageId: '<m1@x>' }] } },
      { id: 'failed', status: 'failed', result: { files: [{ name: 'Gone.xlsx', path: '/h/gone.xlsx' }] } },
    ];
    const out = producedFiles(steps);
    expect(out.files).toEqual([
      { stepId: 'split', stepTitle: 'Split by region', name: 'North.xlsx', path: '/h/runs/r1/shared/out/North.xlsx' },
      { stepId: 'split', stepTitle: 'Split by region', name: 'South.xlsx', path: '/h/runs/r1/shared/out/South.xlsx' },
    ]);
    expect(out.messages).toEqual([{ stepId: 'send', stepTitle: 'Send', to: ['ana@example.com'], subject: 'Sales North', status: 'sent' }]);
  });

  it('offers a message the outbox wrote as its .eml file, beside who got it', () => {
    const eml = { name: 'c1-000.eml', path: '/h/plugins/data/fan.summer.email/outbox/c1-000.eml' };
    const out = producedFiles([{ id: 'send', status: 'done', result: { messages: [{ to: ['a@x'], subject: 'S', status: 'sent', messageId: '<1>', file: eml }, { to: ['b@x'], subject: 'T', status: 'not-sent', messageId: '<2>', file: { name: 'x.eml', path: 'relative.eml' } }] } }]);
    expect(out.messages[0]?.file).toEqual(eml);
    expect(out.messages[1]?.file).toBeUndefined();
    expect(out.files.map((f) => f.name)).toEqual(['c1-000.eml']);
  });

  it('never throws and stays bounded on any results (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ id: fc.string(), result: fc.anything() })), (steps) => {
        const out = producedFiles(steps);
        return out.files.length <= 100 && out.messages.length <= 100;
      }),
    );
  });
});
