import { randomUUID } from 'node:crypto';
import { FengYuError } from '@fengyu/protocol';
import { type Kysely, sql } from 'kysely';
import type { Db } from '../storage/database';
import type { MemoryItem } from './memory-ranking';

/** Memories per owner. Every query is scoped by owner; ids are random UUIDs. */

type Tables = {
  memories: { id: string; owner: string; content: string; created_at: string; created_ms: number; run_id: string | null; conversation_id: string | null };
};

/** Where a memory came from: the run or the chat conversation whose call stored it. */
export interface MemorySource {
  runId?: string;
  conversationId?: string;
}

export interface StoredMemory extends MemoryItem {
  createdAtIso: string;
  source: MemorySource;
}

/** One page of the Memory screen: newest first, every term of `q` in the text (any case). */
export interface MemoryPageQuery {
  q?: string;
  limit: number;
  cursor?: string;
}

export class MemoryRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  async add(owner: string, content: string, now: number, source: MemorySource = {}): Promise<StoredMemory> {
    const row = { id: randomUUID(), owner, content, created_at: new Date(now).toISOString(), created_ms: now, run_id: source.runId ?? null, conversation_id: source.conversationId ?? null };
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

  /** A keyset page (created_ms desc, id asc); `nextCursor` when more rows follow. */
  async page(owner: string, query: MemoryPageQuery): Promise<{ items: StoredMemory[]; nextCursor?: string }> {
    const after = query.cursor === undefined ? undefined : memoryCursor.decode(query.cursor);
    let sel = this.db.selectFrom('memories').selectAll().where('owner', '=', owner);
    for (const term of searchTerms(query.q)) sel = sel.where(sql<boolean>`lower(content) like ${`%${escapeLike(term)}%`} escape '\\'`);
    if (after) sel = sel.where((eb) => eb.or([eb('created_ms', '<', after.ms), eb.and([eb('created_ms', '=', after.ms), eb('id', '>', after.id)])]));
    const rows = (await sel.orderBy('created_ms', 'desc').orderBy('id').limit(query.limit + 1).execute()).map(toMemory);
    const items = rows.slice(0, query.limit);
    const last = items.at(-1);
    return { items, ...(rows.length > query.limit && last ? { nextCursor: memoryCursor.encode(last) } : {}) };
  }

  async remove(owner: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('memories').where('owner', '=', owner).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

/** At most 10 lower-cased whitespace-separated terms, each at most 200 characters. */
export function searchTerms(q: string | undefined): string[] {
  return (q ?? '').toLowerCase().split(/\s+/).filter(Boolean).slice(0, 10).map((t) => t.slice(0, 200));
}

/** LIKE's wildcards stay literal: `%`, `_` and the escape itself are escaped with `\` (SQLite has no default escape character, so the query names it). */
function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The opaque cursor: base64url of `createdMs:id`; anything else is `memory_cursor_invalid`. */
export const memoryCursor = {
  encode: (m: StoredMemory): string => Buffer.from(`${m.createdAt}:${m.id}`).toString('base64url'),
  decode(cursor: string): { ms: number; id: string } {
    const text = Buffer.from(cursor, 'base64url').toString();
    const m = /^(\d{1,16}):([0-9a-f-]{36})$/.exec(text);
    if (!m) throw new FengYuError('memory_cursor_invalid');
    return { ms: Number(m[1]), id: m[2] as string };
  },
};

function toMemory(row: Tables['memories']): StoredMemory {
  const source: MemorySource = { ...(row.run_id ? { runId: row.run_id } : {}), ...(row.conversation_id ? { conversationId: row.conversation_id } : {}) };
  return { id: row.id, content: row.content, createdAt: Number(row.created_ms), createdAtIso: row.created_at, source };
}
