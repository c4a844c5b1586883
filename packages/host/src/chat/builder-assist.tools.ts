import {
  AgentPlanSchema,
  checkGraph,
  diffGraphs,
  explainDiagnostic,
  FengYuError,
  type GraphDiagnostic,
  graphFingerprint,
  graphToPlan,
  inputContract,
  isComparisonProblem,
  isEmptyDiff,
  isPortProblem,
  isStepNode,
  type JsonSchema,
  type Locale,
  localize,
  planToGraph,
  type Proposal,
  startNode,
  type WorkflowGraph,
} from '@fengyu/protocol';
import type { CatalogSnapshot } from '../tools/catalog';
import type { Tool, ToolContext } from '../tools/tool';
import { toolSchema, workflowEffect } from '../workflows/workflow.tools';
import type { WorkflowContent } from '../workflows/workflow.repository';

export type { Proposal };

/**
 * The builder's AI panel binds four request-scoped tools to one chat turn, all over the canvas
 * snapshot the turn carries (unsaved and invalid graphs included):
 * - `inspect_current_flow`: the live graph, its compiled plan and input contract, the editor's
 *   diagnostics and the installed tools' input/output contracts;
 * - `diagnose_current_flow`: the graph's problems (`checkGraph`, the canvas' own check) and the
 *   last run's error, without changing anything;
 * - `edit_current_flow`: a proposal (a complete replacement, or an edit of the current graph)
 *   built with the shared plan ⇄ graph code; it is reported to the panel, never saved;
 * - `run_current_flow`: runs the saved definition the turn auto-saved, refused when the graph
 *   does not validate.
 */

/** The canvas as the panel sent it with the turn. */
export interface CanvasSnapshot {
  graph: WorkflowGraph;
  name: string;
  description: string;
  goal?: string;
  workflowId?: string;
  revision?: number;
  /** What the editor currently shows (passed through to the model as is). */
  editorDiagnostics: unknown[];
  lastRunError?: string;
}

/** The saved definition a valid canvas was auto-saved as. */
export interface SavedFlow {
  id: string;
  revision: number;
  state: 'draft' | 'published';
  content: WorkflowContent;
}

export interface AuthoringDeps {
  /** The owner's catalog without workflow tools (what a saved flow may call). */
  catalog: CatalogSnapshot;
  /** The saved definition, when the canvas validated and was saved for this turn. */
  saved?: SavedFlow;
  /** The problems that kept the canvas from being saved (empty when it was saved). */
  problems: GraphDiagnostic[];
  newId: () => string;
  onProposal: (p: Proposal) => void;
  /** Runs the saved draft as a tool call (the same path as `run_workflow_<id>`). */
  runSaved: (saved: SavedFlow, args: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>;
  /** The language of the person in the panel (their Accept-Language): the diagnosis' explanations are in it. */
  locale?: Locale;
}


const withMessages = (list: GraphDiagnostic[], locale: Locale = 'en') => list.map((d) => ({ ...d, message: localize(d.code, d.params, locale) }));

function toolContracts(catalog: CatalogSnapshot) {
  return catalog.tools.map((t) => ({ name: t.name, description: t.description, effect: t.effect, available: t.available, inputSchema: t.inputSchema, ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}) }));
}

/** Groups problems by the kinds a person asks about. */
function problemKinds(list: GraphDiagnostic[]): Record<string, string[]> {
  const kinds: Record<string, string[]> = { unavailableTools: [], missingArguments: [], malformedReferences: [], danglingConnections: [], cycles: [], wrongPorts: [], badComparisons: [], other: [] };
  for (const d of list) {
    const where = d.nodeId ?? d.edgeId ?? d.field ?? '';
    const kind =
      d.code === 'step_unavailable_tool' || d.code === 'step_unknown_tool'
        ? 'unavailableTools'
        : d.code === 'step_invalid_arguments'
          ? 'missingArguments'
          : d.code.startsWith('ref_') || d.code.startsWith('goal_ref')
            ? 'malformedReferences'
            : d.code === 'edge_dangling'
              ? 'danglingConnections'
              : d.code === 'plan_cycle'
                ? 'cycles'
                : isPortProblem(d)
                  ? 'wrongPorts'
                  : isComparisonProblem(d)
                    ? 'badComparisons'
                    : 'other';
    kinds[kind]?.push(`${where}: ${localize(d.code, d.params, 'en')}`);
  }
  return kinds;
}

const EDIT_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['steps'],
  additionalProperties: false,
  properties: {
    mode: { type: 'string', enum: ['replace', 'edit'], description: '"replace": a complete new flow (e.g. from an empty canvas); "edit" (default): the current flow changed, keeping positions, notes and connections of unchanged steps.' },
    steps: {
      type: 'array',
      description:
        'Every step of the resulting flow, in order (AgentPlan steps: id, title?, tool (a catalog tool name) or instruction (a model step), arguments, dependsOn?, join?, requiresApproval?). ' +
        'A condition: {"id":"check","kind":"condition","cases":[{"name":"big","when":{"all":[{"left":"{{node.count.result.rows}}","op":"gt","right":1000}]}}]}, or with "instruction" and cases[].description to let the model pick; later steps depend on a port "check:big" / "check:else". ' +
        'A loop: {"id":"each","kind":"forEach","items":"{{node.split.result.files}}","concurrency":2,"steps":[…body steps using {{item}} and {{index}}…]}.',
      items: { type: 'object', required: ['id'] },
    },
    inputSchema: { type: 'object', description: 'JSON Schema (type object) of the flow inputs; omit to keep the current inputs.' },
    summary: { type: 'string', maxLength: 2000, description: 'One sentence for the user: what the proposal changes.' },
  },
};

/** The proposed graph: a fresh layout for a replacement; kept positions, notes and tool refs for an edit. */
function proposedGraph(current: WorkflowGraph, mode: 'replace' | 'edit', steps: unknown, inputSchema: JsonSchema | undefined): WorkflowGraph {
  const parsed = AgentPlanSchema.safeParse({ steps });
  if (!parsed.success) {
    const reason = parsed.error.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ');
    throw new FengYuError('assist_steps_invalid', { reason });
  }
  const plan = parsed.data;
  if (mode === 'replace') return planToGraph(plan, inputSchema ?? { type: 'object', properties: {} });
  const layout = Object.fromEntries([...current.nodes, ...current.notes].map((n) => [n.id, n.position]));
  const next = planToGraph(plan, inputSchema ?? graphToPlan(current).inputSchema, layout);
  const was = new Map(current.nodes.map((n) => [n.id, n]));
  for (const n of next.nodes) {
    const old = was.get(n.id);
    if (n.type === 'start' && old?.type === 'start' && !inputSchema) n.data = structuredClone(old.data);
    if (n.type === 'tool' && old?.type === 'tool' && old.tool.name === n.tool.name) n.tool = { ...old.tool };
    if (isStepNode(n) && old && isStepNode(old) && old.data.sources) n.data.sources = { ...old.data.sources };
  }
  const handles = new Map(current.edges.map((e) => [`${e.source}>${e.target}`, e]));
  next.edges = next.edges.map((e) => {
    const old = handles.get(`${e.source}>${e.target}`);
    return old ? { ...old } : e;
  });
  next.notes = structuredClone(current.notes);
  return next;
}

function tool(name: string, description: string, inputSchema: JsonSchema, effect: Tool['effect'], invoke: Tool['invoke']): Tool {
  return { name, description, inputSchema, effect, source: 'builtin', id: `builder:${name}`, schemaRevision: '1', idempotent: effect === 'read', available: true, invoke };
}

export function authoringTools(snap: CanvasSnapshot, deps: AuthoringDeps): Tool[] {
  const check = (g: WorkflowGraph) => checkGraph(g, { tool: (n) => deps.catalog.get(n), goal: snap.goal });
  const noArgs: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

  const inspect = tool('inspect_current_flow', 'Read the flow open in the builder right now (unsaved edits included): its graph, compiled plan, input contract, the editor\'s diagnostics and the installed tools\' input/output contracts.', noArgs, 'read', async () => {
    const { plan, inputSchema } = graphToPlan(snap.graph, snap.goal);
    return {
      workflow: { id: snap.workflowId ?? null, revision: deps.saved?.revision ?? snap.revision ?? null, name: snap.name, description: snap.description, goal: snap.goal ?? null, saved: !!deps.saved, runnable: !!deps.saved },
      graph: snap.graph,
      plan,
      inputSchema,
      inputContract: inputContract(inputSchema),
      editorDiagnostics: snap.editorDiagnostics,
      diagnostics: withMessages(check(snap.graph)),
      tools: toolContracts(deps.catalog),
    };
  });

  const diagnose = tool('diagnose_current_flow', 'Check the flow open in the builder for problems (unavailable tools, missing required arguments, malformed references, dangling connections, cycles, connections to a port a step does not have, bad comparisons in conditions) and report the last run\'s error; each problem comes with an explanation in the user\'s language that names the step and the field. Changes nothing.', noArgs, 'read', async () => {
    const problems = check(snap.graph);
    const locale = deps.locale ?? 'en';
    const explained = withMessages(problems, locale).map((p) => ({ ...p, explanation: explainDiagnostic(p, snap.graph, locale) }));
    return { valid: problems.length === 0, problems: explained, byKind: problemKinds(problems), lastRunError: snap.lastRunError ?? null };
  });

  const edit = tool('edit_current_flow', 'Propose a new version of the flow open in the builder. The user sees it as a diff on the canvas and decides to apply it; this tool never saves anything.', EDIT_SCHEMA, 'read', async (args) => {
    const mode = args.mode === 'replace' ? 'replace' : 'edit';
    const inputSchema = args.inputSchema && typeof args.inputSchema === 'object' ? (args.inputSchema as JsonSchema) : undefined;
    const graph = proposedGraph(snap.graph, mode, args.steps, inputSchema);
    const diff = diffGraphs(snap.graph, graph);
    if (isEmptyDiff(diff)) throw new FengYuError('assist_edit_unchanged', {});
    const problems = withMessages(check(graph));
    const summary = typeof args.summary === 'string' ? args.summary : '';
    const proposal: Proposal = { proposalId: deps.newId(), mode, summary, graph, diff, problems, base: { fingerprint: graphFingerprint(snap.graph), workflowId: snap.workflowId, revision: deps.saved?.revision ?? snap.revision } };
    deps.onProposal(proposal);
    return { proposalId: proposal.proposalId, status: 'proposed: shown to the user as a diff; nothing was saved', diff, problems: problems.map((p) => `${p.nodeId ?? p.edgeId ?? ''}: ${p.message}`) };
  });

  const saved = deps.saved;
  const runSchema = saved ? toolSchema(saved.content.inputSchema) : { type: 'object' };
  const run = tool(
    'run_current_flow',
    saved ? `Run the flow open in the builder (saved as revision ${saved.revision}) with the given inputs and return its result.` : 'Run the flow open in the builder. It does not validate right now, so a call is refused: diagnose and fix it first.',
    runSchema,
    saved ? workflowEffect(saved.content, deps.catalog) : 'read',
    async (args, ctx) => {
      if (!saved) {
        const problems = withMessages(deps.problems.length ? deps.problems : check(snap.graph));
        throw new FengYuError('assist_flow_not_runnable', { count: problems.length || 1, problems: problems.map((p) => p.message).join(' ') || 'the flow has no steps yet.' });
      }
      return deps.runSaved(saved, args, ctx);
    },
  );
  return [inspect, diagnose, edit, run];
}

/** What the model is told about the builder turn. */
export function builderSystemPrompt(snap: CanvasSnapshot, saved: SavedFlow | undefined, problems: GraphDiagnostic[]): string {
  const steps = snap.graph.nodes.filter(isStepNode).length;
  const fields = startNode(snap.graph)?.data.fields.length ?? 0;
  return [
    'You are the AI panel of the FengYu flow builder. The user is editing a flow on a canvas right now.',
    `The canvas holds "${snap.name || 'an untitled flow'}" with ${steps} step(s), ${fields} input(s) and ${snap.graph.edges.length} connection(s).`,
    saved ? `It validates and was saved (revision ${saved.revision}); run_current_flow runs it.` : `It does not validate (${problems.length} problem(s)) or is empty, so run_current_flow refuses to run it.`,
    'Use inspect_current_flow to read it, diagnose_current_flow to find problems, and edit_current_flow to propose changes (the user reviews and applies them; never claim a proposal was saved).',
    'Tool steps name catalog tools exactly; reference earlier results as {{node.<id>.result…}} and inputs as {{inputs.<name>}}.',
    'A flow may branch (a condition step with cases; later steps depend on its ports "<id>:<case>" or "<id>:else") and loop (a forEach step whose body steps run once per item with {{item}} and {{index}}); edit_current_flow adds and changes both. When diagnose_current_flow explains a problem, pass its explanation on in your own words.',
  ].join('\n');
}
