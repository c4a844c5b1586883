import { randomUUID } from 'node:crypto';

/**
 * A new run's id: a UUID of version 7 (RFC 9562), its first 48 bits the creation time in
 * milliseconds, the other 74 random. Ids made later sort after earlier ones, so the rows a run
 * adds to the keys of `runs`, `run_events` and `step_executions` land beside those of the runs
 * created just before it: a group commit of several new runs writes a few shared pages instead of
 * a page per run and key.
 */
export function newRunId(nowMs: number): string {
  const ms = Math.max(0, Math.floor(nowMs)) % 2 ** 48;
  const time = ms.toString(16).padStart(12, '0');
  // randomUUID is a version 4 UUID: its random bits and RFC variant are kept, its version is set to 7
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`;
}
