import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../src/tasks/task.store';
import { FengYuError } from '@fengyu/protocol';
import { taskFailure } from '../../src/tasks/task-failure';
import { capText, newTaskRecord, taskSnapshot } from '../../src/tasks/task-common';

/**
 * The shapes a task is reported in, built without temporary objects: the snapshot's fields and
 * their order (what REST, tools and the UI show), the record of a new task, and the output cap.
 */

const base: TaskRecord = {
  id: 't1',
  ownerId: 'o',
  kind: 'workflow-webhook',
  priority: 'interactive',
  state: 'failed',
  workflowId: 'w',
  workflowVersion: 3,
  inputs: { n: 1 },
  permissionMode: 'full-access',
  submittedMs: Date.UTC(2026, 11, 4, 14, 0, 0, 0),
  output: { text: 'out', truncated: false },
};

describe('taskSnapshot', () => {
  it('lists every field in the answer order, optional ones where they belong', () => {
    const r: TaskRecord = { ...base, runId: 'r', scheduleId: 's', triggerId: 'wh', startedMs: base.submittedMs + 5, finishedMs: base.submittedMs + 25, error: { code: 'x', message: 'y' } };
    const snap = taskSnapshot(r, base.submittedMs + 100);
    expect(Object.keys(snap)).toEqual(['id', 'ownerId', 'kind', 'priority', 'state', 'queued', 'workflowId', 'workflowVersion', 'runId', 'scheduleId', 'triggerId', 'submittedAt', 'startedAt', 'finishedAt', 'queueWaitMs', 'runDurationMs', 'output', 'error']);
    expect(snap).toEqual({
      id: 't1',
      ownerId: 'o',
      kind: 'workflow-webhook',
      priority: 'interactive',
      state: 'failed',
      queued: false,
      workflowId: 'w',
      workflowVersion: 3,
      runId: 'r',
      scheduleId: 's',
      triggerId: 'wh',
      submittedAt: '2026-12-04T14:00:00.000Z',
      startedAt: '2026-12-04T14:00:00.005Z',
      finishedAt: '2026-12-04T14:00:00.025Z',
      queueWaitMs: 5,
      runDurationMs: 20,
      output: { text: 'out', truncated: false },
      error: { code: 'x', message: 'y' },
    });
    // copies: a later change of the record does not reach a snapshot already taken
    r.output.text = 'changed';
    (r.error as { code: string }).code = 'changed';
    expect(snap.output.text).toBe('out');
    expect(snap.error?.code).toBe('x');
  });

  it('leaves out what a queued task does not have yet', () => {
    const snap = taskSnapshot({ ...base, state: 'queued', output: { text: '', truncated: false } }, base.submittedMs + 7);
    expect(Object.keys(snap)).toEqual(['id', 'ownerId', 'kind', 'priority', 'state', 'queued', 'workflowId', 'workflowVersion', 'submittedAt', 'queueWaitMs', 'output']);
    expect(snap.queued).toBe(true);
    expect(snap.queueWaitMs).toBe(7);
  });
});

describe('newTaskRecord', () => {
  it('names a schedule or trigger only when the request has one', () => {
    const req = { ownerId: 'o', workflowId: 'w', priority: 'normal' as const, kind: 'workflow' as const };
    const plain = newTaskRecord('a', req, { workflowVersion: 1, inputs: {} }, 'queued', 5, undefined);
    expect('scheduleId' in plain || 'triggerId' in plain).toBe(false);
    expect(plain.permissionMode).toBe('ask');
    const hooked = newTaskRecord('b', { ...req, kind: 'workflow-webhook', triggerId: 'wh_1', permissionMode: 'full-access' }, { workflowVersion: 2, inputs: { n: 1 } }, 'running', 6, 'ask');
    expect(hooked).toMatchObject({ id: 'b', triggerId: 'wh_1', permissionMode: 'full-access', state: 'running', workflowVersion: 2, submittedMs: 6, output: { text: '', truncated: false } });
  });
});

describe('capText', () => {
  it('keeps text within the cap as it is, and cuts longer text at a character boundary', () => {
    expect(capText('hello', 15)).toEqual({ text: 'hello', truncated: false });
    // five 3-byte characters are exactly 15 bytes: kept whole
    expect(capText('中文中文中', 15)).toEqual({ text: '中文中文中', truncated: false });
    // six are 18 bytes: cut after the fifth, never inside one
    expect(capText('中文中文中文', 16)).toEqual({ text: '中文中文中', truncated: true });
    // ASCII past a cap that its length alone cannot decide: encoded and compared
    expect(capText('abcdefgh', 8)).toEqual({ text: 'abcdefgh', truncated: false });
    expect(capText('abcdefghi', 8)).toEqual({ text: 'abcdefgh', truncated: true });
    // a 4-byte character (two UTF-16 units) is not split either
    expect(capText('ab😀', 5)).toEqual({ text: 'ab', truncated: true });
    expect(capText('ab😀', 6)).toEqual({ text: 'ab😀', truncated: false });
  });
});

describe('taskFailure', () => {
  it('records an error that needs parameters as its sentence, not its bare code', () => {
    const f = taskFailure(new FengYuError('workflow_not_found', { id: 'wf_gone' }));
    expect(f.code).toBe('workflow_not_found');
    expect(f.message).not.toBe('workflow_not_found');
    expect(f.message).toContain('wf_gone');
    expect(f.message).not.toMatch(/\{\w+\}/);
  });

  it("keeps a plain error's own words, and an unknown thrown value as text", () => {
    expect(taskFailure(new Error('disk full'))).toEqual({ code: 'internal', message: 'disk full' });
    expect(taskFailure('boom')).toEqual({ code: 'internal', message: 'boom' });
  });
});

