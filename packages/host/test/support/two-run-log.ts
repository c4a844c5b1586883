import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunEvent } from '@fengyu/protocol';
import { type RunRow, RunRepository } from '../../src/agent/run.repository';
import { EventLog, type NewEvent } from '../../src/events/event-log';
import { migrate, type OpenedSqlite, openDatabase } from '../../src/storage/database';

/**
 * An event log on a real SQLite file with two running runs, `a` and `b`, created: what the
 * event-log tests commit into. Every published event is appended to `published` as run + seq.
 */

export const clock = { now: () => Date.parse('2026-03-01T00:00:00Z') };
const at = '2026-03-01T00:00:00.000Z';
export const audit = (n: number) => ({ type: 'audit', kind: 'test', n }) as unknown as NewEvent;

function runRow(id: string): RunRow {
  return { id, owner: 'alice', goal: 'g', status: 'running', plan: null, config: '{}', inputs: '{}', files: null, gate: null, summary: null, error: null, result: null, parent_run_id: null, origin: 'api', sandbox: 'none', workflow_id: null, workflow_version: null, last_seq: 0, created_at: at, updated_at: at, finished_at: null };
}

export interface TwoRunLog {
  home: string;
  opened: OpenedSqlite;
  log: EventLog;
  close(): Promise<void>;
}

export async function openTwoRunLog(prefix: string, published: string[]): Promise<TwoRunLog> {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const opened = openDatabase(home);
  await migrate(opened.db);
  const log = new EventLog(opened.db, clock);
  const repo = new RunRepository(opened.db);
  published.length = 0;
  for (const id of ['a', 'b']) {
    await log.commit(id, [{ type: 'run_created', status: 'running', origin: 'api' } as never], (trx) => repo.insert(runRow(id), trx));
    log.subscribe(id, (e: RunEvent) => published.push(`${e.runId}${e.seq}`));
  }
  return {
    home,
    opened,
    log,
    async close() {
      log.flush();
      await opened.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
