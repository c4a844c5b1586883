import type { AgentPlan, JsonSchema } from '@fengyu/protocol';
import { stableHash } from '@fengyu/protocol';
import type { Kysely, Transaction } from 'kysely';
import { type Db, dialectOf } from '../storage/database';

/** Workflow definitions and their immutable published versions (tables of migration 030). */

export interface WorkflowRow {
  id: string;
  owner: string;
  name: string;
  description: string;
  input_schema: string;
  plan: string;
  graph: string | null;
  layout: string | null;
  content_hash: string;
  revision: number;
  published_version: number | null;
  created_at: string;
  updated_at: string;
  /** The MCP serving setting as JSON (`WorkflowMcp`), or null when never set (migration 210). */
  mcp?: string | null;
  /** The error workflow's id, or null (migration 170). */
  error_workflow_id?: string | null;
}

export interface VersionRow {
  workflow_id: string;
  version: number;
  revision: number;
  name: string;
  description: string;
  input_schema: string;
  plan: string;
  graph: string | null;
  layout: string | null;
  content_hash: string;
  published_at: string;
}

type Tables = { workflows: WorkflowRow; workflow_versions: VersionRow };
export type WorkflowTrx = Transaction<Tables>;

/** The versioned part of a definition: what a draft edit changes and a version freezes. */
export interface WorkflowContent {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  plan: AgentPlan;
  graph: Record<string, unknown> | null;
  layout: Record<string, { x: number; y: number }> | null;
}

export function contentColumns(c: WorkflowContent) {
  return {
    name: c.name,
    description: c.description,
    input_schema: JSON.stringify(c.inputSchema),
    plan: JSON.stringify(c.plan),
    graph: c.graph ? JSON.stringify(c.graph) : null,
    layout: c.layout ? JSON.stringify(c.layout) : null,
    // hashed as stored (a JSON round trip), so a re-read draft hashes the same
    content_hash: stableHash(JSON.parse(JSON.stringify(c))),
  };
}

export function contentOf(row: Pick<WorkflowRow, 'name' | 'description' | 'input_schema' | 'plan' | 'graph' | 'layout'>): WorkflowContent {
  return {
    name: row.name,
    description: row.description,
    inputSchema: JSON.parse(row.input_schema),
    plan: JSON.parse(row.plan),
    graph: row.graph ? JSON.parse(row.graph) : null,
    layout: row.layout ? JSON.parse(row.layout) : null,
  };
}

export class WorkflowRepository {
  private readonly db: Kysely<Tables>;
  /**
   * `published` answers by owner, kept while no write went through this repository. Only with a
   * database this host process alone writes (SQLite); on a shared one other hosts write too.
   */
  private readonly publishedCache?: Map<string, Array<{ row: WorkflowRow; version: VersionRow }>>;
  /** Moves on every write (and at the end of every transaction): an answer read across a move is not kept. */
  private generation = 0;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
    if (dialectOf(db) === 'sqlite') this.publishedCache = new Map();
  }

  private wrote(): void {
    this.generation += 1;
    this.publishedCache?.clear();
  }

  async transaction<T>(fn: (trx: WorkflowTrx) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(fn);
    } finally {
      this.wrote();
    }
  }

  async insert(row: WorkflowRow): Promise<void> {
    this.wrote();
    await this.db.insertInto('workflows').values(row).execute();
    this.wrote();
  }

  async get(owner: string, id: string, trx?: WorkflowTrx): Promise<WorkflowRow | undefined> {
    return (trx ?? this.db).selectFrom('workflows').selectAll().where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
  }

  async list(owner: string): Promise<WorkflowRow[]> {
    return this.db.selectFrom('workflows').selectAll().where('owner', '=', owner).orderBy('updated_at', 'desc').orderBy('id').execute();
  }

  /** Rows of every published workflow of the owner, each with its active version. */
  /** What `published` would answer, when it is cached (SQLite, no write since it was read); else undefined. */
  publishedNow(owner: string): ReadonlyArray<{ row: WorkflowRow; version: VersionRow }> | undefined {
    return this.publishedCache?.get(owner);
  }

  async published(owner: string): Promise<Array<{ row: WorkflowRow; version: VersionRow }>> {
    const hit = this.publishedCache?.get(owner);
    if (hit) return hit;
    const generation = this.generation;
    const found = await this.readPublished(owner);
    if (generation === this.generation) this.publishedCache?.set(owner, found);
    return found;
  }

  private async readPublished(owner: string): Promise<Array<{ row: WorkflowRow; version: VersionRow }>> {
    const rows = await this.db.selectFrom('workflows').selectAll().where('owner', '=', owner).where('published_version', 'is not', null).orderBy('id').execute();
    if (rows.length === 0) return [];
    const versions = await this.db
      .selectFrom('workflow_versions as v')
      .innerJoin('workflows as w', (j) => j.onRef('w.id', '=', 'v.workflow_id').onRef('w.published_version', '=', 'v.version'))
      .selectAll('v')
      .where('w.owner', '=', owner)
      .execute();
    const byId = new Map(versions.map((v) => [v.workflow_id, v]));
    return rows.flatMap((row) => {
      const version = byId.get(row.id);
      return version ? [{ row, version }] : [];
    });
  }

  /**
   * Applies `patch` only if the row is still at `revision` (optimistic concurrency); the
   * revision moves forward by one. Returns false when another writer got there first.
   */
  async updateAt(owner: string, id: string, revision: number, patch: Partial<WorkflowRow>, trx?: WorkflowTrx): Promise<boolean> {
    this.wrote();
    const res = await (trx ?? this.db)
      .updateTable('workflows')
      .set({ ...patch, revision: revision + 1 })
      .where('id', '=', id)
      .where('owner', '=', owner)
      .where('revision', '=', revision)
      .executeTakeFirst();
    this.wrote();
    return Number(res.numUpdatedRows) === 1;
  }

  async delete(owner: string, id: string, trx: WorkflowTrx): Promise<boolean> {
    this.wrote();
    const res = await trx.deleteFrom('workflows').where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
    this.wrote();
    return Number(res.numDeletedRows) === 1;
  }

  async insertVersion(row: VersionRow, trx: WorkflowTrx): Promise<void> {
    this.wrote();
    await trx.insertInto('workflow_versions').values(row).execute();
    this.wrote();
  }

  async lastVersion(id: string, trx: WorkflowTrx): Promise<number> {
    const r = await trx.selectFrom('workflow_versions').select((eb) => eb.fn.max('version').as('v')).where('workflow_id', '=', id).executeTakeFirst();
    return Number(r?.v ?? 0);
  }

  async version(id: string, version: number): Promise<VersionRow | undefined> {
    return this.db.selectFrom('workflow_versions').selectAll().where('workflow_id', '=', id).where('version', '=', version).executeTakeFirst();
  }

  async versions(id: string): Promise<VersionRow[]> {
    return this.db.selectFrom('workflow_versions').selectAll().where('workflow_id', '=', id).orderBy('version', 'desc').execute();
  }
}
