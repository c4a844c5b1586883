import { newRunId } from '../agent/run-id';

/**
 * A new task id: a UUID of version 7 made as a run's id is (the submission time in milliseconds,
 * then 74 random bits). Tasks submitted later sort after earlier ones, so each new row's key in
 * `bg_tasks` lands on the table's newest leaf, shared by the tasks of one commit group, instead of
 * a random leaf per task. The API promises no id format beyond a string; the 74 random bits keep
 * ids unguessable, and they guard nothing by themselves: every read, wait and kill checks the owner.
 */
export function newTaskId(submittedMs: number): string {
  return newRunId(submittedMs);
}
