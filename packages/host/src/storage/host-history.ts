import type { Db } from './database';
import type { HostRow } from './host-lease';

/**
 * The spans the host processes of this database ran (the `hosts` rows of `HostLease`): from
 * start to stop, or to the last heartbeat (of a host that crashed, or of a live one: no span starts
 * after a live host's, so its stale heartbeat opens no gap). A crash is known to within a renewal.
 */
export async function hostSpans(db: Db, since: number): Promise<Array<{ start: number; end: number }>> {
  const rows = await db
    .withTables<{ hosts: HostRow }>()
    .selectFrom('hosts')
    .select(['started_ms', 'heartbeat_ms', 'stopped_ms'])
    .where((eb) => eb.or([eb('heartbeat_ms', '>=', since), eb('stopped_ms', '>=', since)]))
    .orderBy('started_ms')
    .limit(5000)
    .execute();
  return rows.map((r) => ({ start: Number(r.started_ms), end: Number(r.stopped_ms ?? r.heartbeat_ms) }));
}
