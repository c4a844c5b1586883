import { sealInputs, secretInputNames } from '@fengyu/protocol';
import type { Db } from '../database';
import { workflowInputSchemas } from './260-seal-stored-secrets';

/**
 * Background tasks of a workflow with a secret input (docs/secrets.md) kept its value in clear in
 * `bg_tasks.inputs`. A task whose run started or ended needs it no more (its run kept its own
 * inputs): the value becomes the marker here. A task not yet started, a schedule and a webhook
 * trigger still need theirs: the host moves those into the vault at start-up
 * (`secrets/kept-inputs.repository.ts`; a migration does not read the vault's key). On SQLite the file
 * is then compacted, so no freed page keeps a copy.
 */
export async function up(db: Db): Promise<{ compact: boolean }> {
  const names = new Map<string, string[]>();
  for (const [id, schema] of await workflowInputSchemas(db)) {
    const n = secretInputNames(schema);
    if (n.length) names.set(id, n);
  }
  if (names.size === 0) return { compact: false };
  let changed = false;
  const rows = (await db
    .selectFrom('bg_tasks')
    .select(['id', 'workflow_id', 'inputs'])
    .where('workflow_id', 'in', [...names.keys()])
    .where((eb) => eb.or([eb('run_id', 'is not', null), eb('finished_ms', 'is not', null)]))
    .execute()) as Array<{ id: string; workflow_id: string; inputs: string }>;
  for (const r of rows) {
    let inputs: Record<string, unknown>;
    try {
      inputs = JSON.parse(r.inputs) as Record<string, unknown>;
    } catch {
      continue;
    }
    const sealed = sealInputs(inputs, names.get(r.workflow_id) ?? []);
    if (sealed === inputs) continue;
    await db.updateTable('bg_tasks').set({ inputs: JSON.stringify(sealed) }).where('id', '=', r.id).execute();
    changed = true;
  }
  return { compact: changed };
}
