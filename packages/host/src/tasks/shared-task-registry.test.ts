import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, FairQueue } from './fair-queue';
import { replayQueue } from './shared-dispatch';
import type { TaskPriority } from './task-submitter';

/**
 * Admission on a shared database replays the live rows into the fair queue. Whatever happened
 * before, the replay admits or refuses a new task exactly as the single host's live queue does
 * (same limit named), and reports the same queue pressure.
 */

const limits = { ...DEFAULT_LIMITS, maxRunning: 4, ownerMaxRunning: 3, maxQueued: 12, ownerQueueLimit: 6, batchOwner: 3, batchGlobal: 6, nonInteractiveOwner: 5, nonInteractiveGlobal: 9 };

type Op = { kind: 'submit'; owner: number; priority: TaskPriority } | { kind: 'finish'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('submit' as const), owner: fc.integer({ min: 0, max: 3 }), priority: fc.constantFrom<TaskPriority>('interactive', 'normal', 'batch') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }) },
);

describe('replayQueue', () => {
  it('admits and refuses like the live queue after any history', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const live = new FairQueue(limits);
        // the rows a shared database holds: state, and submission order
        const rows = new Map<string, { id: string; owner: string; priority: TaskPriority; state: 'queued' | 'running'; submitted_ms: number; released_ms: number | null }>();
        let now = 0;
        let n = 0;
        for (const o of ops) {
          now += 1;
          if (o.kind === 'finish') {
            const running = [...rows.values()].filter((r) => r.state === 'running');
            const r = running[o.pick % Math.max(1, running.length)];
            if (!r) continue;
            rows.delete(r.id);
            for (const t of live.finish(r.id)) {
              const row = rows.get(t.id);
              if (row) row.state = 'running';
            }
            continue;
          }
          const id = `t${n++}`;
          const task = { id, owner: `o${o.owner}`, priority: o.priority };
          const replica = replayQueue([...rows.values()], limits);
          const expected = live.submit(task, now);
          const got = replica.submit(task, now);
          if (expected.kind === 'refuse') expect(got).toEqual(expected);
          else expect(got.kind).toBe('queue');
          if (expected.kind !== 'refuse') rows.set(id, { id, owner: task.owner, priority: task.priority, state: expected.kind === 'start' ? 'running' : 'queued', submitted_ms: now, released_ms: null });
          const a = live.capacity(now, task.owner);
          const b = replayQueue([...rows.values()], limits).capacity(now, task.owner);
          expect({ ...b, maxRunning: a.maxRunning, ownerMaxRunning: a.ownerMaxRunning, saturated: a.saturated }).toEqual(a);
        }
      }),
      { numRuns: 300 },
    );
  });
});
