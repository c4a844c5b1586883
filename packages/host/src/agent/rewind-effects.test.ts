import type { AgentPlan, StepExecution, ToolEffect } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rewindPreview } from './rewind-effects';

const EFFECTS: Record<string, ToolEffect> = { read_sheet: 'read', send_mail: 'external', write_file: 'write', shell: 'command' };
const effectOf = (tool: string) => EFFECTS[tool];
const ex = (stepId: string, status: StepExecution['status'], iteration?: number): StepExecution => ({ stepId, status, attempts: 1, reused: false, ...(iteration !== undefined ? { iteration } : {}) });

describe('rewindPreview', () => {
  const plan: AgentPlan = {
    steps: [
      { id: 'read', tool: 'read_sheet' },
      { id: 'write', tool: 'write_file', dependsOn: ['read'] },
      { id: 'mail', title: 'Send the e-mails', tool: 'send_mail', dependsOn: ['write'] },
      { id: 'each', kind: 'forEach', items: '{{node.read.result.rows}}', steps: [{ id: 'body', tool: 'send_mail' }], dependsOn: ['write'] } as never,
      { id: 'summarise', instruction: 'sum up', dependsOn: ['mail'] },
      { id: 'gone', tool: 'uninstalled_tool', dependsOn: ['mail'] },
      { id: 'later', tool: 'write_file', dependsOn: ['mail'] },
    ],
  };
  const executions = [ex('read', 'done'), ex('write', 'done'), ex('mail', 'uncertain'), ex('body', 'done', 0), ex('body', 'done', 1), ex('summarise', 'done'), ex('gone', 'done'), ex('later', 'failed')];

  it('lists dropped steps whose write, external or command tool already ran; not reads, model steps, failed or kept ones', () => {
    const p = rewindPreview(plan, 1, executions, effectOf);
    expect(p.kept).toEqual(['read']);
    expect(p.dropped).toEqual(['write', 'mail', 'each', 'summarise', 'gone', 'later']);
    expect(p.alreadyApplied).toEqual([
      { stepId: 'write', ranStepId: 'write', tool: 'write_file', effect: 'write', status: 'done', executions: 1 },
      { stepId: 'mail', title: 'Send the e-mails', ranStepId: 'mail', tool: 'send_mail', effect: 'external', status: 'uncertain', executions: 1 },
      { stepId: 'each', ranStepId: 'body', tool: 'send_mail', effect: 'external', status: 'done', executions: 2 },
      { stepId: 'gone', ranStepId: 'gone', tool: 'uninstalled_tool', effect: 'unknown', status: 'done', executions: 1 },
    ]);
  });

  it('keeping every step drops nothing and warns of nothing', () => {
    expect(rewindPreview(plan, plan.steps.length, executions, effectOf)).toMatchObject({ dropped: [], alreadyApplied: [] });
  });

  it('property: every warning names a dropped step whose tool is not a read and that ran', () => {
    const tools = ['read_sheet', 'send_mail', 'write_file', 'shell', 'missing'];
    const arb = fc.array(fc.record({ tool: fc.option(fc.constantFrom(...tools), { nil: undefined }), status: fc.constantFrom('done', 'failed', 'uncertain', 'skipped', 'running', 'none') }), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(arb, fc.nat(), (steps, k) => {
        const p: AgentPlan = { steps: steps.map((s, i) => (s.tool ? { id: `s${i}`, tool: s.tool } : { id: `s${i}`, instruction: 'x' })) };
        const exs = steps.flatMap((s, i) => (s.status === 'none' ? [] : [ex(`s${i}`, s.status as StepExecution['status'])]));
        const keep = 1 + (k % steps.length);
        const r = rewindPreview(p, keep, exs, effectOf);
        expect(r.kept.length + r.dropped.length).toBe(steps.length);
        const expected = steps.map((s, i) => ({ ...s, i })).filter((s) => s.i >= keep && s.tool && effectOf(s.tool) !== 'read' && (s.status === 'done' || s.status === 'uncertain'));
        expect(r.alreadyApplied.map((a) => a.stepId)).toEqual(expected.map((s) => `s${s.i}`));
      }),
    );
  });
});
