import { type AgentPlan, type JsonSchema, MIN_REDACTED_VALUE_CHARS, REDACTED, sealInputs, sealPlanSecretLiterals, secretFields, secretInputNames, type PlanStep, workflowToolName } from '@fengyu/protocol';
import { sealGraphSecrets } from '../../workflows/secret-literals';
import type { Db } from '../database';

/**
 * Rows written before write-only values were sealed (docs/secrets.md) keep them in clear: a
 * password typed into a step's arguments (`writeOnly`, `format: "password"`), in a workflow's
 * draft and versions (plan and canvas graph) and in a run's plan; a workflow input declared
 * `format: "password"` in a run's inputs, its rendered goal and its events; a plan in an inbox
 * item. Each becomes the marker `[redacted]`, and every copy of such a value elsewhere in the
 * run's rows (events, step results, inbox items) is replaced too. Which arguments are secret
 * comes from the installed plugins' manifests and the workflows' input schemas (the schemas the
 * catalog serves); the values cannot move into the vault here (its key is not read by
 * migrations), so a resumed old run runs such a step without the value, as a new one would. On
 * SQLite the file is compacted afterwards (`compact`), so no freed page keeps a copy.
 */

type Row = Record<string, unknown>;

/** Tool name → input schema, for the tools declaring a secret argument. */
async function secretToolSchemas(db: Db): Promise<Map<string, JsonSchema>> {
  const out = new Map<string, JsonSchema>();
  for (const p of (await db.selectFrom('plugins').select(['id', 'manifest']).execute()) as Row[]) {
    let manifest: { aiTools?: Array<{ name?: string; method?: string }>; rpc?: { methods?: Record<string, { inputSchema?: JsonSchema }> } };
    try {
      manifest = JSON.parse(String(p.manifest));
    } catch {
      continue;
    }
    for (const t of manifest.aiTools ?? []) {
      const schema = t.method ? manifest.rpc?.methods?.[t.method]?.inputSchema : undefined;
      if (t.name && schema && secretFields(schema).length > 0) out.set(t.name, schema);
    }
  }
  for (const [id, schema] of await workflowInputSchemas(db)) if (secretFields(schema).length > 0) out.set(workflowToolName(id), schema);
  return out;
}

/** Each workflow's input schemas (its draft's and every version's), merged by property; only the workflows `ids` names when given. */
export async function workflowInputSchemas(db: Db, ids?: readonly string[]): Promise<Map<string, JsonSchema>> {
  const out = new Map<string, JsonSchema>();
  if (ids?.length === 0) return out;
  const drafts = db.selectFrom('workflows').select(['id as workflow_id', 'input_schema']);
  const versions = db.selectFrom('workflow_versions').select(['workflow_id', 'input_schema']);
  const rows = [...((await (ids ? drafts.where('id', 'in', [...ids]) : drafts).execute()) as Row[]), ...((await (ids ? versions.where('workflow_id', 'in', [...ids]) : versions).execute()) as Row[])];
  for (const r of rows) {
    let schema: JsonSchema;
    try {
      schema = JSON.parse(String(r.input_schema));
    } catch {
      continue;
    }
    const id = String(r.workflow_id);
    const before = out.get(id);
    out.set(id, { type: 'object', properties: { ...(before?.properties ?? {}), ...(schema.properties ?? {}) } } as JsonSchema);
  }
  return out;
}

function parse<T>(text: unknown): T | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** The literal values `sealed` replaced by the marker in `plan`'s steps (loop bodies included). */
function sealedValues(before: PlanStep[], after: PlanStep[], out: string[]): string[] {
  before.forEach((s, i) => {
    const a = after[i];
    if (!a || a === s) return;
    for (const [k, v] of Object.entries(s.arguments ?? {})) if (a.arguments?.[k] === REDACTED && v !== REDACTED) out.push(typeof v === 'string' ? v : JSON.stringify(v));
    if (Array.isArray(s.steps) && Array.isArray(a.steps)) sealedValues(s.steps, a.steps, out);
  });
  return out;
}

/** `text` with every JSON-escaped copy of each value replaced by the marker. */
function scrub(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of values) {
    if (v.length < MIN_REDACTED_VALUE_CHARS) continue;
    const escaped = JSON.stringify(v).slice(1, -1);
    if (out.includes(escaped)) out = out.split(escaped).join(REDACTED);
  }
  return out;
}

async function sealWorkflows(db: Db, table: 'workflows' | 'workflow_versions', schemaOf: (tool: string) => JsonSchema | undefined): Promise<boolean> {
  const key = table === 'workflows' ? ['id'] : ['workflow_id', 'version'];
  let changed = false;
  for (const r of (await db.selectFrom(table).select([...key, 'plan', 'graph']).execute()) as Row[]) {
    const plan = parse<AgentPlan>(r.plan);
    const graph = parse<Record<string, unknown>>(r.graph);
    const sealedPlan = plan && Array.isArray(plan.steps) ? sealPlanSecretLiterals(plan, schemaOf) : plan;
    const sealedGraph = graph ? sealGraphSecrets(graph, schemaOf) : graph;
    if (sealedPlan === plan && sealedGraph === graph) continue;
    let q = db.updateTable(table).set({ plan: JSON.stringify(sealedPlan), ...(graph ? { graph: JSON.stringify(sealedGraph) } : {}) });
    for (const k of key) q = q.where(k, '=', r[k]);
    await q.execute();
    changed = true;
  }
  return changed;
}

/** Seals one run's row; answers the clear values it held (to scrub from the run's other rows). */
function sealRun(r: Row, schemaOf: (tool: string) => JsonSchema | undefined, inputNames: readonly string[]): { patch: Row; values: string[] } {
  const values: string[] = [];
  const patch: Row = {};
  const inputs = parse<Record<string, unknown>>(r.inputs);
  if (inputs && inputNames.length) {
    const sealed = sealInputs(inputs, inputNames);
    if (sealed !== inputs) {
      for (const n of inputNames) if (typeof inputs[n] === 'string' && sealed[n] === REDACTED) values.push(inputs[n] as string);
      patch.inputs = JSON.stringify(sealed);
    }
  }
  const plan = parse<AgentPlan>(r.plan);
  let planText = typeof r.plan === 'string' ? r.plan : null;
  if (plan && Array.isArray(plan.steps)) {
    const sealed = sealPlanSecretLiterals(plan, schemaOf);
    if (sealed !== plan) {
      sealedValues(plan.steps, sealed.steps, values);
      planText = JSON.stringify(sealed);
    }
  }
  if (planText !== null) {
    const scrubbed = scrub(planText, values);
    if (scrubbed !== r.plan) patch.plan = scrubbed;
  }
  if (typeof r.goal === 'string') {
    const goal = scrub(JSON.stringify(r.goal), values);
    if (goal !== JSON.stringify(r.goal)) patch.goal = JSON.parse(goal);
  }
  return { patch, values };
}

/** Replaces the values in every other row of the run: events, step results and errors, inbox items. */
async function scrubRun(db: Db, runId: string, values: readonly string[]): Promise<void> {
  const targets: Array<[string, string[], string[]]> = [
    ['run_events', ['seq'], ['data']],
    ['step_executions', ['step_id'], ['result', 'error']],
    ['inbox_items', ['id'], ['body', 'title']],
  ];
  for (const [table, key, cols] of targets) {
    for (const row of (await db.selectFrom(table).select([...key, ...cols]).where('run_id', '=', runId).execute()) as Row[]) {
      const set: Row = {};
      for (const c of cols) {
        if (typeof row[c] !== 'string') continue;
        const text = c === 'title' ? JSON.stringify(row[c]) : (row[c] as string);
        const next = scrub(text, values);
        if (next !== text) set[c] = c === 'title' ? JSON.parse(next) : next;
      }
      if (Object.keys(set).length === 0) continue;
      let q = db.updateTable(table).set(set).where('run_id', '=', runId);
      for (const k of key) q = q.where(k, '=', row[k]);
      await q.execute();
    }
  }
}

export async function up(db: Db): Promise<{ compact: boolean }> {
  const schemas = await secretToolSchemas(db);
  const schemaOf = (tool: string) => schemas.get(tool);
  const inputsOf = new Map<string, string[]>();
  for (const [id, schema] of await workflowInputSchemas(db)) {
    const names = secretInputNames(schema);
    if (names.length) inputsOf.set(id, names);
  }
  let changed = false;
  if (schemas.size > 0) {
    changed = (await sealWorkflows(db, 'workflows', schemaOf)) || changed;
    changed = (await sealWorkflows(db, 'workflow_versions', schemaOf)) || changed;
  }
  if (schemas.size === 0 && inputsOf.size === 0) return { compact: changed };
  // only the runs that may hold such a value: a plan naming a secret-taking tool, or a run of a workflow with a secret input
  const tools = [...schemas.keys()];
  const workflows = [...inputsOf.keys()];
  const runs = (await db
    .selectFrom('runs')
    .select(['id', 'goal', 'plan', 'inputs', 'workflow_id'])
    .where((eb) => eb.or([...tools.map((t) => eb('plan', 'like', `%"${t}"%`)), ...(workflows.length ? [eb('workflow_id', 'in', workflows)] : [])]))
    .execute()) as Row[];
  for (const r of runs) {
    const { patch, values } = sealRun(r, schemaOf, inputsOf.get(String(r.workflow_id)) ?? []);
    if (Object.keys(patch).length > 0) {
      await db.updateTable('runs').set(patch).where('id', '=', r.id).execute();
      changed = true;
    }
    if (values.length > 0) await scrubRun(db, String(r.id), values);
  }
  // inbox items of plan approvals kept the run's plan as it ran
  if (schemas.size > 0) {
    for (const item of (await db.selectFrom('inbox_items').select(['id', 'body']).where('kind', '=', 'plan_approval').execute()) as Row[]) {
      const body = parse<{ plan?: AgentPlan }>(item.body);
      if (!body?.plan || !Array.isArray(body.plan.steps)) continue;
      const plan = sealPlanSecretLiterals(body.plan, schemaOf);
      if (plan === body.plan) continue;
      await db.updateTable('inbox_items').set({ body: JSON.stringify({ ...body, plan }) }).where('id', '=', item.id).execute();
      changed = true;
    }
  }
  return { compact: changed };
}
