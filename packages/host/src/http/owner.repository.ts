import type { Kysely } from 'kysely';
import type { Db } from '../storage/database';

/** Rows of the `owners` table: additional owners and the SHA-256 digests of their tokens. */

type Tables = {
  owners: { id: string; name: string; token_sha256: string | null; created_at: string };
};

export class OwnerRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  /** The owner whose token has this digest (hex), or undefined. */
  async idByTokenDigest(digestHex: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('owners').select('id').where('token_sha256', '=', digestHex).executeTakeFirst();
    return row?.id;
  }

  async exists(id: string): Promise<boolean> {
    return (await this.db.selectFrom('owners').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }

  async insert(row: { id: string; name: string; tokenDigest: string; createdAt: string }): Promise<void> {
    await this.db.insertInto('owners').values({ id: row.id, name: row.name, token_sha256: row.tokenDigest, created_at: row.createdAt }).execute();
  }
}
