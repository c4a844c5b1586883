import { randomUUID } from 'node:crypto';
import type { ConversationSummary } from '@fengyu/protocol';
import type { ModelMessage } from 'ai';
import type { Kysely } from 'kysely';
import type { Db } from '../storage/database';

/** Chat conversations and messages, per owner. Messages keep the full AI SDK message as JSON. */

type Tables = {
  chat_conversations: { id: string; owner: string; title: string; backend: string | null; model: string | null; created_at: string; updated_at: string };
  chat_messages: { conversation_id: string; seq: number; role: string; text: string; message: string; created_at: string };
};

export type { ConversationSummary };

export interface StoredMessage {
  seq: number;
  role: string;
  /** The message's plain text (tool calls and results omitted). */
  text: string;
  message: ModelMessage;
  createdAt: string;
}

export class ConversationRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  async create(owner: string, title: string, backend: string, model: string, now: string): Promise<ConversationSummary> {
    const row = { id: randomUUID(), owner, title, backend, model, created_at: now, updated_at: now };
    await this.db.insertInto('chat_conversations').values(row).execute();
    return summary(row);
  }

  async get(owner: string, id: string): Promise<ConversationSummary | undefined> {
    const row = await this.db.selectFrom('chat_conversations').selectAll().where('owner', '=', owner).where('id', '=', id).executeTakeFirst();
    return row ? summary(row) : undefined;
  }

  async list(owner: string, limit: number): Promise<ConversationSummary[]> {
    const rows = await this.db.selectFrom('chat_conversations').selectAll().where('owner', '=', owner).orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(summary);
  }

  async remove(owner: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const found = await trx.selectFrom('chat_conversations').select('id').where('owner', '=', owner).where('id', '=', id).executeTakeFirst();
      if (!found) return false;
      await trx.deleteFrom('chat_messages').where('conversation_id', '=', id).execute();
      await trx.deleteFrom('chat_conversations').where('id', '=', id).execute();
      return true;
    });
  }

  async messages(conversationId: string): Promise<StoredMessage[]> {
    const rows = await this.db.selectFrom('chat_messages').selectAll().where('conversation_id', '=', conversationId).orderBy('seq').execute();
    return rows.map((r) => ({ seq: Number(r.seq), role: r.role, text: r.text, message: JSON.parse(r.message) as ModelMessage, createdAt: r.created_at }));
  }

  /** Appends messages after the last one and touches the conversation, in one transaction. */
  async append(conversationId: string, messages: readonly ModelMessage[], now: string): Promise<void> {
    if (messages.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      const last = await trx.selectFrom('chat_messages').select((eb) => eb.fn.max('seq').as('seq')).where('conversation_id', '=', conversationId).executeTakeFirst();
      let seq = Number(last?.seq ?? 0);
      const rows = messages.map((m) => ({ conversation_id: conversationId, seq: ++seq, role: m.role, text: plainText(m), message: JSON.stringify(m), created_at: now }));
      await trx.insertInto('chat_messages').values(rows).execute();
      await trx.updateTable('chat_conversations').set({ updated_at: now }).where('id', '=', conversationId).execute();
    });
  }
}

function summary(row: Tables['chat_conversations']): ConversationSummary {
  return {
    id: row.id,
    title: row.title,
    ...(row.backend ? { backend: row.backend } : {}),
    ...(row.model ? { model: row.model } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The text parts of a message, joined. */
export function plainText(m: ModelMessage): string {
  if (typeof m.content === 'string') return m.content;
  return m.content
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join('')
    .trim();
}
