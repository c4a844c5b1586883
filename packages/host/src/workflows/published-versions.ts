import { FengYuError } from '@fengyu/protocol';
import { type Db, preparedOf, rawOf } from '../storage/database';
import type { WorkflowService } from './workflow.service';

const READ = 'select published_version from workflows where id = ? and owner = ?';
const LIMIT = 10_000;

/**
 * Which version of an owner's workflow is active (null: not published; throws workflow_not_found).
 *
 * On the host's own SQLite file this process is the only writer and every publish and deletion
 * goes through the workflows service, so the answer is kept per workflow and dropped when the
 * service reports a change (just before its transaction commits, and again after it ended); an
 * answer read across such a report is not kept. On a shared database (another host may publish
 * at any moment) it is read every time.
 */
export class PublishedVersions {
  private readonly known = new Map<string, number | null>();
  /** Moves on every reported change. */
  private changes = 0;
  private readonly keep: boolean;
  readonly close: () => void;

  constructor(
    private readonly service: Pick<WorkflowService, 'row' | 'onPublishedChange'>,
    private readonly db?: Db,
  ) {
    this.keep = db !== undefined && rawOf(db) !== undefined;
    this.close = this.keep
      ? service.onPublishedChange((owner, id) => {
          this.changes += 1;
          this.known.delete(keyOf(owner, id));
        })
      : () => undefined;
  }

  /** The kept answer, when there is one (synchronous: no read, no promise). */
  peek(owner: string, workflowId: string): number | null | undefined {
    return this.known.get(keyOf(owner, workflowId));
  }

  async get(owner: string, workflowId: string): Promise<number | null> {
    const key = keyOf(owner, workflowId);
    const hit = this.known.get(key);
    if (hit !== undefined) return hit;
    const seen = this.changes;
    const version = await this.read(owner, workflowId);
    if (this.keep && seen === this.changes) {
      if (this.known.size >= LIMIT) this.known.clear();
      this.known.set(key, version);
    }
    return version;
  }

  protected async read(owner: string, workflowId: string): Promise<number | null> {
    // a prepared statement when no transaction holds the connection; otherwise through the service (it waits for the commit)
    const stmt = this.db ? preparedOf(this.db, READ) : undefined;
    if (stmt) {
      const row = stmt.get(workflowId, owner) as { published_version: number | null } | undefined;
      if (!row) throw new FengYuError('workflow_not_found', { id: workflowId });
      return row.published_version;
    }
    return (await this.service.row(owner, workflowId)).published_version;
  }
}

function keyOf(owner: string, workflowId: string): string {
  return `${owner}\n${workflowId}`;
}
