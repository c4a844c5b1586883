import type { Kysely } from 'kysely';
import type { Db } from '../storage/database';

/** The `files` table: uploaded files (FileRefs), owner-scoped. */

export interface FileRow {
  id: string;
  owner: string;
  name: string;
  size: number;
  sha256: string;
  path: string;
  created_at: string;
}

/** What clients see of an upload. */
export interface FileRef {
  id: string;
  name: string;
  size: number;
  sha256: string;
}

type Tables = { files: FileRow };

export class FileRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  async insert(row: FileRow): Promise<void> {
    await this.db.insertInto('files').values(row).execute();
  }

  async delete(owner: string, id: string): Promise<void> {
    await this.db.deleteFrom('files').where('id', '=', id).where('owner', '=', owner).execute();
  }

  async get(owner: string, id: string): Promise<FileRow | undefined> {
    return this.db.selectFrom('files').selectAll().where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
  }
}

export const toFileRef = (r: FileRow): FileRef => ({ id: r.id, name: r.name, size: r.size, sha256: r.sha256 });
