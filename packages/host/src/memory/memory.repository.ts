import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db } from '../storage/database';
import type { MemoryItem } from './memory-ranking';

/** Memories per owner. Every query is scoped by owner; ids are random UUIDs. */

type Tables = {
  memories: { id: string; owner: string; content: string; created_at: string; created_ms: number };
};

export interface StoredMemory extends MemoryItem {
  createdAtIso: string;
}

export class MemoryRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  async add(owner: string, content: string, now: number): Promise<StoredMemory> {
    const row = { id: randomUUID(), owner, content, created_at: new Date(now).toISOString(), created_ms: now };
    await this.db.insertInto('memories').values(row).execute();
    return toMemory(row);
  }

  async count(owner: string): Promise<number> {
    const r = await this.db.selectFrom('memories').select((eb) => eb.fn.countAll<number>().as('n')).where('owner', '=', owner).executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** Newest first. */
  async list(owner: string, limit: number): Promise<StoredMemory[]> {
    const rows = await this.db.selectFrom('memories').selectAll().where('owner', '=', owner).orderBy('created_ms', 'desc').orderBy('id').limit(limit).execute();
    return rows.map(toMemory);
  }

  async remove(owner: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('memories').where('owner', '=', owner).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

function toMemory(row: Tables['memories']): StoredMemory {
  return { id: row.id, content: row.content, createdAt: Number(row.created_ms), createdAtIso: row.created_at };
}
