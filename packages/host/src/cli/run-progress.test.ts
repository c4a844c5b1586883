import { describe, expect, it } from 'vitest';
import { BODY_SKIPS_LISTED, newProgressState, planLines, progressOf } from './run-progress';

describe('fengyu run progress', () => {
  it('lists a condition with its branches and a loop with its body indented', () => {
    const lines = planLines([
      { id: 'split', tool: 'excel_split' },
      { id: 'each', kind: 'forEach', items: '{{node.split.result.files}}', dependsOn: ['split'], steps: [{ id: 'check', kind: 'condition', cases: [{ name: 'big' }] }, { id: 'mail_team', tool: 'email_send', dependsOn: ['check:else'] }] },
    ]);
    expect(lines).toEqual(['  - split: excel_split', '  - each: for each item of {{node.split.result.files}} (after split)', '      - check: condition → big | else', '      - mail_team: email_send (after check:else)']);
  });

  it('prints skipped steps, advances the bar only for top-level steps, and shows loop progress every tenth and at the end', () => {
    const s = newProgressState();
    expect(progressOf('step_complete', { stepId: 'mail_team', status: 'skipped' }, s)).toEqual({ lines: ['  ○ mail_team skipped'], status: 'mail_team skipped', advance: true });
    expect(progressOf('step_complete', { stepId: 'mail_team', status: 'skipped', parentStepId: 'each', iteration: 3 }, s)).toEqual({ lines: ['  ○ mail_team skipped (each #3)'], status: 'mail_team (each #3) skipped', advance: false });
    const shown = Array.from({ length: 120 }, (_, i) => progressOf('loop_progress', { stepId: 'each', done: i + 1, total: 120, iteration: i }, s));
    expect(shown[36]?.status).toBe('each: 37/120');
    expect(shown.flatMap((u) => u.lines)).toEqual(['12', '24', '36', '48', '60', '72', '84', '96', '108', '120'].map((n) => `  each: ${n}/120`));
  });

  it('lists at most a few skipped body steps per loop and counts the rest at its end', () => {
    const s = newProgressState();
    const lines = Array.from({ length: BODY_SKIPS_LISTED + 5 }, (_, i) => progressOf('step_complete', { stepId: 'team', status: 'skipped', parentStepId: 'each', iteration: i }, s).lines).flat();
    expect(lines).toHaveLength(BODY_SKIPS_LISTED);
    expect(progressOf('loop_progress', { stepId: 'each', done: 15, total: 15, iteration: 14 }, s).lines).toEqual(['  each: 15/15', '  ○ 5 more skipped step(s) in each']);
    expect(progressOf('step_complete', { stepId: 'x', status: 'failed', error: 'boom', parentStepId: 'each', iteration: 2 }, s).lines).toEqual(['  ✗ x (each #2): boom']);
  });
});
