import type { RunEvent, RunEventPayloads, RunEventType } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import type { Transaction } from 'kysely';

/** The types the event log and its group commit share: a new event, a listener, a transaction, a projection change. */

export type NewEvent = { [T in RunEventType]: { type: T } & RunEventPayloads[T] }[RunEventType];

export type Listener = (event: RunEvent) => void;

export type Trx = Transaction<any>;

/**
 * A projection change written through prepared statements. `creates`: it inserts the run's row, so
 * the run has no event before this commit's (a stored event references its run's row, and the
 * insert fails on an existing id). `fold`: this change and a later one of its run, queued in the
 * same group commit, as one change writing each row once with its last values (undefined when
 * the two do not fold). A change with `fold` writes only rows of its own run: the group writes the
 * folded change where the first one was, before the later one's events, and nothing for the later
 * one; a group that fails is written again commit by commit, each change unfolded.
 */
export type RawWrite = ((db: Database.Database) => void) & { creates?: true; fold?: (later: RawWrite) => RawWrite | undefined };

