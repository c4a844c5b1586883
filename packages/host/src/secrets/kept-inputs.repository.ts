import { sealInputs, secretInputNames } from '@fengyu/protocol';
import { keptInputKey } from '../agent/secret-inputs';
import type { Db } from '../storage/database';
import { workflowInputSchemas } from '../storage/migrations/260-seal-stored-secrets';
import type { Vault } from './vault';

/**
 * The repository of the start-up move into the vault of the secret input values (docs/secrets.md) that schedules, webhook
 * triggers and tasks not yet started kept in clear before they were sealed, run at every start (it
 * finds nothing once done; a migration cannot do it, it does not read the vault's key). Each value
 * is sealed under its holder's name (`schedule:<id>/input/<name>`, `trigger:<id>/…`,
 * `task:<id>/…`), the row keeps the marker, then the database is compacted (SQLite: VACUUM and a
 * truncated WAL) so no clear copy stays on disk. Tasks whose run started or ended were sealed by
 * migration 270 (their run no longer needs the value).
 */

type Row = { id: string; owner: string; workflow_id: string | null; held: string };

const HOLDERS = [
  { table: 'schedules', column: 'inputs', scope: 'schedule', waiting: false },
  { table: 'webhook_triggers', column: 'defaults', scope: 'trigger', waiting: false },
  { table: 'bg_tasks', column: 'inputs', scope: 'task', waiting: true },
] as const;

/** Returns how many values were moved. */
export async function adoptKeptInputs(db: Db, vault: Pick<Vault, 'mergeInternal'>, compact: () => Promise<void>): Promise<number> {
  const found: Array<{ holder: (typeof HOLDERS)[number]; row: Row }> = [];
  for (const holder of HOLDERS) {
    let q = db.selectFrom(holder.table).select(['id', 'owner', 'workflow_id', `${holder.column} as held`]).where(holder.column, '<>', '{}');
    // a task not yet started is queued (index bg_tasks_state); the others were sealed by migration 270
    if (holder.waiting) q = q.where('state', '=', 'queued').where('run_id', 'is', null).where('finished_ms', 'is', null);
    for (const row of (await q.execute()) as Row[]) if (row.workflow_id) found.push({ holder, row });
  }
  if (found.length === 0) return 0;
  const schemas = await workflowInputSchemas(db, [...new Set(found.map((f) => f.row.workflow_id as string))]);
  const moves = new Map<string, Record<string, string>>();
  const rewrites: Array<{ table: string; column: string; id: string; held: string }> = [];
  for (const { holder, row } of found) {
    const names = secretInputNames(schemas.get(row.workflow_id as string));
    if (names.length === 0) continue;
    let inputs: Record<string, unknown>;
    try {
      inputs = JSON.parse(row.held) as Record<string, unknown>;
    } catch {
      continue;
    }
    const sealed = sealInputs(inputs, names);
    if (sealed === inputs) continue;
    const values = moves.get(row.owner) ?? {};
    for (const n of names) if (sealed[n] !== inputs[n]) values[keptInputKey(`${holder.scope}:${row.id}`, n)] = inputs[n] as string;
    moves.set(row.owner, values);
    rewrites.push({ table: holder.table, column: holder.column, id: row.id, held: JSON.stringify(sealed) });
  }
  // the vault first: a crash after it leaves clear copies to move again, never a lost value
  let count = 0;
  for (const [owner, values] of moves) {
    count += Object.keys(values).length;
    await vault.mergeInternal(owner, values);
  }
  for (const w of rewrites) await db.updateTable(w.table).set({ [w.column]: w.held }).where('id', '=', w.id).execute();
  if (rewrites.length > 0) await compact();
  return count;
}
