import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { busyRefusal, capacityWarnings, durationText, liveDurations, percent } from './capacity';
import type { TaskCapacity, TaskSnapshot } from '@fengyu/protocol';

const idle: TaskCapacity = {
  policy: 'owner-round-robin-weighted-priority',
  maxRunning: 16, ownerMaxRunning: 12,
  running: 0,
  maxQueued: 128,
  queued: 0,
  saturated: false,
  activeOwners: 0,
  byPriority: { interactive: { running: 0, queued: 0 }, normal: { running: 0, queued: 0 }, batch: { running: 0, queued: 0 } },
  oldestQueueWaitMs: 0,
  oldestInteractiveQueueWaitMs: 0,
  oldestNormalQueueWaitMs: 0,
  oldestBatchQueueWaitMs: 0,
  batchLimit: { owner: 16, global: 64, ownerCount: 0, globalCount: 0 },
  nonInteractiveLimit: { owner: 24, global: 96, ownerCount: 0, globalCount: 0 },
  ownerQueueLimit: 32,
  ownedQueued: 0,
  ownedRunning: 0,
  ownedQueueAvailable: 32,
  ownerSaturated: false,
};

describe('capacity warnings', () => {
  it('says nothing for an idle host or a wait just under 30 s', () => {
    expect(capacityWarnings(idle)).toEqual([]);
    expect(capacityWarnings({ ...idle, oldestQueueWaitMs: 29_999, oldestNormalQueueWaitMs: 29_999 })).toEqual([]);
  });

  it('names the class that is actually aging, not the global oldest alone', () => {
    const c = { ...idle, queued: 3, oldestQueueWaitMs: 45_000, oldestBatchQueueWaitMs: 45_000, oldestInteractiveQueueWaitMs: 2_000 };
    expect(capacityWarnings(c)).toEqual([{ key: 'aging', params: { priority: 'batch', seconds: 45 } }]);
    const two = { ...c, oldestNormalQueueWaitMs: 30_000 };
    expect(capacityWarnings(two).map((w) => w.key === 'aging' && w.params.priority)).toEqual(['normal', 'batch']);
  });

  it('warns when the global queue or the own allowance is full', () => {
    expect(capacityWarnings({ ...idle, queued: 128 })).toEqual([{ key: 'globalQueueFull', params: { max: 128 } }]);
    expect(capacityWarnings({ ...idle, queued: 127 })).toEqual([]);
    expect(capacityWarnings({ ...idle, ownedQueued: 32, ownedQueueAvailable: 0, queued: 32 })).toEqual([{ key: 'ownQueueFull', params: { max: 32 } }]);
  });
});

describe('utilization and durations', () => {
  it('computes percentages within 0..100', () => {
    expect(percent(4, 16)).toBe(25);
    expect(percent(20, 16)).toBe(100);
    expect(percent(1, 0)).toBe(0);
  });

  const task = (over: Partial<TaskSnapshot>): TaskSnapshot => ({ id: 't', ownerId: 'local', kind: 'workflow', priority: 'normal', state: 'queued', queued: true, workflowId: 'w', workflowVersion: 1, submittedAt: '2026-01-01T00:00:00Z', queueWaitMs: 1000, output: { text: '', truncated: false }, ...over });

  it('advances the queue wait of a queued task and the run duration of a running one', () => {
    expect(liveDurations(task({}), 10_000, 12_500)).toEqual({ queueWaitMs: 3500 });
    expect(liveDurations(task({ state: 'running', queued: false, runDurationMs: 400 }), 10_000, 12_000)).toEqual({ queueWaitMs: 1000, runDurationMs: 2400 });
    // a finished task stands still
    expect(liveDurations(task({ state: 'completed', queued: false, runDurationMs: 400 }), 10_000, 99_000)).toEqual({ queueWaitMs: 1000, runDurationMs: 400 });
  });

  it('words durations in three shapes', () => {
    expect(durationText(4200)).toEqual({ key: 'seconds', params: { s: '4.2' } });
    expect(durationText(185_000)).toEqual({ key: 'minutes', params: { m: 3, s: 5 } });
    expect(durationText(7_800_000)).toEqual({ key: 'hours', params: { h: 2, m: 10 } });
  });
});

describe('busy refusal', () => {
  it('reads the scope and reservation of a 429, and ignores other errors', () => {
    const e = new ApiError(429, 'capacity_exhausted', 'x', { capacityScope: 'owner-priority', capacityPriority: 'batch', retryable: true, retryAfterSeconds: 1 });
    expect(busyRefusal(e)).toEqual({ scope: 'owner-priority', priority: 'batch', retryAfterSeconds: 1 });
    expect(busyRefusal(new ApiError(429, 'capacity_exhausted', 'x'))).toEqual({ scope: 'global', retryAfterSeconds: 1 });
    expect(busyRefusal(new ApiError(400, 'workflow_inputs_invalid', 'x'))).toBeUndefined();
    expect(busyRefusal(new Error('x'))).toBeUndefined();
  });
});
