import type { Trx } from '../events/event-log';
import type { ReleaseCommit } from '../agent/let-go';
import type { Db } from '../storage/database';
import type { SharedTaskStore } from './shared-task.store';
import type { TaskEngine } from './task-engine';

/** A park's transaction found the task no longer running here: it rolls back. */
class NotParked extends Error {}

export interface ParkDeps {
  store: SharedTaskStore;
  engine: TaskEngine;
  hostId: string;
  /** Lets go of a live run that only waits at its gate, with the task's change in one transaction (`AgentService.letGo`). */
  letGo: (runId: string, commit: ReleaseCommit) => Promise<boolean>;
}

/**
 * A shared database's task whose run waits at its gate (docs/inbox.md): in one transaction the
 * run is let go of, the task goes `waiting` naming no host (as after its host's stop) and its job
 * is completed. True when that committed; false when the run goes on here (a step still running,
 * an answer first) or the task no longer runs here (a kill asked for, swept as dead).
 */
export function parkTask(deps: ParkDeps, taskId: string, runId: string): Promise<boolean> {
  const { store, engine, hostId } = deps;
  return deps.letGo(runId, (release) =>
    store
      .transaction(async (trx) => {
        if (!(await release(trx as unknown as Trx))) return false;
        const row = await store.parkOne(trx, taskId, runId, hostId);
        if (!row) throw new NotParked();
        if (row.released_ms !== null) await engine.complete(trx as unknown as Db, [taskId]);
        return true;
      })
      .catch((err) => (err instanceof NotParked ? false : Promise.reject(err))),
  );
}
