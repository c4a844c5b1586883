import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, type OpenedSqlite, openDatabase } from '../../src/storage/database';
import { WebhookRepository } from '../../src/webhooks/webhook.repository';

/**
 * A task's end finds its audit row by the row's `seq` (kept from the group's insert). A `seq` is
 * never given to another row, even after the row that had it (the newest one included) was
 * deleted by the audit cap or with its trigger: such an end changes nothing, and never another
 * delivery's row.
 */

let home: string;
let opened: OpenedSqlite;

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-audit-seq-'));
  opened = openDatabase(home);
  await migrate(opened.db);
  opened.raw.prepare("insert into webhook_triggers values ('wh_1', 'default', 'wf1', 'Webhook', '{}', 'full-access', 'ab', 'active', 0, '2026-03-01T00:00:00.000Z', null)").run();
});

afterEach(async () => {
  await opened.close();
  rmSync(home, { recursive: true, force: true });
});

const at = '2026-03-01T00:00:00.000Z';
const ms = 1_772_323_200_000;

function states(): Array<{ id: string; state: string }> {
  return opened.raw.prepare('select id, state from webhook_deliveries order by seq').all() as Array<{ id: string; state: string }>;
}

describe('the audit row found by its seq', () => {
  it('ends the row that was recorded, and only it', () => {
    const group = new WebhookRepository(opened.db).grouped();
    if (!group) throw new Error('no synchronous statements');
    const [a, b] = group.atomically(() => [
      group.record({ id: 'whd_a', triggerId: 'wh_1', acceptedAt: at, acceptedMs: ms, taskId: 't_a', state: 'SUBMITTED' }),
      group.record({ id: 'whd_b', triggerId: 'wh_1', acceptedAt: at, acceptedMs: ms, taskId: 't_b', state: 'SUBMITTED' }),
    ]);
    expect(group.atomically(() => group.finishedDelivery(b as number, ms, 'COMPLETED', at, ms + 5))).toBe(1);
    expect(states()).toEqual([
      { id: 'whd_a', state: 'SUBMITTED' },
      { id: 'whd_b', state: 'COMPLETED' },
    ]);
    // a second end of the same row changes nothing (the row is no longer open)
    expect(group.atomically(() => group.finishedDelivery(b as number, ms, 'FAILED', at, ms + 6))).toBe(0);
    expect(group.atomically(() => group.finishedDelivery(a as number, ms, 'FAILED', at, ms + 7))).toBe(1);
  });

  it('after the newest row was deleted, its seq is not reused: the late end changes no other row', () => {
    const group = new WebhookRepository(opened.db).grouped();
    if (!group) throw new Error('no synchronous statements');
    const old = group.atomically(() => group.record({ id: 'whd_old', triggerId: 'wh_1', acceptedAt: at, acceptedMs: ms, taskId: 't_old', state: 'SUBMITTED' }));
    // the row goes (the audit cap, or its trigger's deletion) while its task still runs
    opened.raw.prepare("delete from webhook_deliveries where id = 'whd_old'").run();
    const next = group.atomically(() => group.record({ id: 'whd_new', triggerId: 'wh_1', acceptedAt: at, acceptedMs: ms, taskId: 't_new', state: 'SUBMITTED' }));
    expect(next).toBeGreaterThan(old);
    expect(group.atomically(() => group.finishedDelivery(old, ms, 'COMPLETED', at, ms + 5))).toBe(0);
    expect(states()).toEqual([{ id: 'whd_new', state: 'SUBMITTED' }]);
  });
});
