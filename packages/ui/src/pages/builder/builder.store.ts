import { type CatalogEntry, collectReferences, type ConditionCase, emptyGraph, type GraphNode, type GraphPosition, graphToPlan, type InputSource, isStepNode, parseGraph, planToGraph, type StartField, type StepNode, type WorkflowGraph } from '@fengyu/protocol';
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import { ApiError } from '../../api/client';
import type { WorkflowDefinition } from '../../api/workflows.api';
import { ensurePatternEngine, patternEngineReady } from '../../app/pattern-engine';
import type { Services } from '../../app/services';
import { applyPositions, connectionToEdge } from '../../flow/canvas-map';
import { type CatalogSync, resolveTool, syncWithCatalog } from '../../flow/catalog-nodes';
import { type Diagnostic, diagnose, diagnosticsByNode } from '../../flow/diagnostics';
import { addConditionNode, addForEachNode, addInputNode, addModelNode, addNote as addNoteTo, addToolNode, duplicateNode, ensureEdge, removableIds, removeElements } from '../../flow/graph-edits';
import { groupAt, placeInGroup } from '../../flow/groups';
import { createHistory } from '../../flow/history';
import type { LoopView } from '../../run/loop-state';
import type { RunBadge } from '../../run/run-state';
import { referencedNode } from '../../flow/input-source';

/**
 * The builder's state: the workflow document being edited (graph + name/description), its undo
 * history, the tool catalog it is checked against, diagnostics, selection and save state.
 * Every structural edit goes through `edit()`, which records an undo snapshot first.
 */

const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

interface Doc {
  name: string;
  description: string;
  /** The plan's goal (may reference `{{inputs.*}}`); shown as the run's title. */
  goal: string;
  /** The workflow started when a run of this one fails (`''` = none). */
  errorWorkflowId: string;
  graph: WorkflowGraph;
}

export const useBuilder = defineStore('builder', () => {
  const services = shallowRef<Services>();
  const workflowId = ref<string>();
  const meta = ref<Pick<WorkflowDefinition, 'state' | 'revision' | 'publishedVersion' | 'hasDraftChanges'>>({ state: 'draft', revision: 0, publishedVersion: null, hasDraftChanges: false });
  const name = ref('');
  const description = ref('');
  const goal = ref('');
  const errorWorkflowId = ref('');
  const graph = ref<WorkflowGraph>(emptyGraph());
  const saved = ref('');
  const catalog = ref<CatalogEntry[]>([]);
  /** The owner's secret names (never values), offered by the Reference picker of tool nodes. */
  const secretNames = ref<string[]>([]);
  const catalogError = ref<string>();
  const sync = ref<CatalogSync>({ unavailable: [], reconciled: [] });
  const selected = ref<string>();
  const loadError = ref<string>();
  const saveError = ref<ApiError>();
  const conflict = ref(false);
  const saving = ref(false);
  const lastResults = ref(new Map<string, unknown>());
  const badges = ref<Record<string, RunBadge>>({});
  /** forEach progress of the watched run, by loop step id. */
  const loops = ref<Record<string, LoopView>>({});
  const snap = ref(false);
  const background = ref(true);
  const history = createHistory<Doc>(50, json);
  const historyTick = ref(0);
  /** Bumped on every load, so the canvas frames a freshly loaded flow once. */
  const loads = ref(0);

  const doc = (): Doc => ({ name: name.value, description: description.value, goal: goal.value, errorWorkflowId: errorWorkflowId.value, graph: graph.value });
  const docJson = () => JSON.stringify(doc());
  saved.value = docJson();
  const dirty = computed(() => docJson() !== saved.value);
  // checked again once the schema patterns' engine has loaded (asked for in init; app/pattern-engine.ts)
  const diagnostics = computed<Diagnostic[]>(() => (patternEngineReady.value, diagnose(graph.value, catalog.value, goal.value)));
  const byNode = computed(() => diagnosticsByNode(diagnostics.value));
  const canUndo = computed(() => (historyTick.value, history.canUndo));
  const canRedo = computed(() => (historyTick.value, history.canRedo));
  const isNew = computed(() => !workflowId.value);

  function init(s: Services) {
    services.value = s;
    void ensurePatternEngine();
  }
  const api = () => {
    if (!services.value) throw new Error('builder not initialised');
    return services.value;
  };

  function applyDoc(d: Doc) {
    name.value = d.name;
    description.value = d.description;
    goal.value = d.goal;
    errorWorkflowId.value = d.errorWorkflowId;
    graph.value = d.graph;
    if (selected.value && !findAny(selected.value)) selected.value = undefined;
  }

  function edit(mutate: (g: WorkflowGraph) => void) {
    history.record(doc());
    mutate(graph.value);
    historyTick.value++;
  }

  function undo() {
    const prev = history.undo(doc());
    if (prev) applyDoc(prev);
    historyTick.value++;
  }

  function redo() {
    const next = history.redo(doc());
    if (next) applyDoc(next);
    historyTick.value++;
  }

  function adopt(def: WorkflowDefinition) {
    workflowId.value = def.id;
    meta.value = { state: def.state, revision: def.revision, publishedVersion: def.publishedVersion ?? null, hasDraftChanges: def.hasDraftChanges === true };
    name.value = def.name;
    description.value = def.description ?? '';
    goal.value = def.plan?.goal ?? '';
    errorWorkflowId.value = def.errorWorkflowId ?? '';
    graph.value = parseGraph(def.graph) ?? planToGraph(def.plan ?? { steps: [] }, def.inputSchema);
    if (catalog.value.length > 0) sync.value = syncWithCatalog(graph.value, catalog.value);
    saved.value = docJson();
  }

  async function loadCatalog() {
    try {
      catalog.value = await api().agent.tools();
      catalogError.value = undefined;
      // a host without the vault (or a failed read) offers no secrets; the catalog still loads
      secretNames.value = (await api().secrets?.list().catch(() => []) ?? []).map((s) => s.name);
      const before = docJson();
      sync.value = syncWithCatalog(graph.value, catalog.value);
      // Binding identities/reconciling is not a user edit: keep "unsaved" honest.
      if (saved.value === before) saved.value = docJson();
    } catch (e) {
      catalogError.value = (e as Error).message;
    }
  }

  async function load(id: string | undefined) {
    loadError.value = undefined;
    conflict.value = false;
    saveError.value = undefined;
    selected.value = undefined;
    lastResults.value = new Map();
    badges.value = {};
    loops.value = {};
    history.clear();
    historyTick.value++;
    const blank = (flowId: string | undefined) => {
      workflowId.value = flowId;
      meta.value = { state: 'draft', revision: 0, publishedVersion: null, hasDraftChanges: false };
      name.value = description.value = goal.value = errorWorkflowId.value = '';
      graph.value = emptyGraph();
      saved.value = docJson();
    };
    if (!id) blank(undefined);
    else
      try {
        adopt(await api().workflows.get(id));
      } catch (e) {
        // never leave the previous flow on screen under this flow's address (nor save it as this one)
        blank(id);
        loadError.value = (e as Error).message;
      }
    loads.value++;
    await loadCatalog();
  }

  function findAny(id: string) {
    return graph.value.nodes.find((n) => n.id === id) ?? graph.value.notes.find((n) => n.id === id);
  }
  function findStep(id: string): StepNode | undefined {
    const n = graph.value.nodes.find((x) => x.id === id);
    return n && isStepNode(n) ? n : undefined;
  }
  const toolOf = (node: GraphNode | undefined) => (node?.type === 'tool' ? resolveTool(node.tool, catalog.value) : undefined);

  function addTool(entry: CatalogEntry, position: GraphPosition) {
    return addStep((g) => addToolNode(g, entry, position), position);
  }
  function addModel(position: GraphPosition) {
    return addStep((g) => addModelNode(g, position), position);
  }
  /** A condition node (`agent`: a model condition); dropped inside a group it joins its body. */
  function addCondition(position: GraphPosition, agent: boolean) {
    return addStep((g) => addConditionNode(g, position, agent), position);
  }
  /** A Human Input node (a group refuses it: the validator names it). */
  function addInput(position: GraphPosition) {
    return addStep((g) => addInputNode(g, position), position);
  }
  function addForEach(position: GraphPosition) {
    let id = '';
    edit((g) => (id = addForEachNode(g, position)));
    selected.value = id;
    return id;
  }
  /** Adds a node (at absolute `position`); one that lands inside a group becomes a body step. */
  function addStep(create: (g: WorkflowGraph) => string, position: GraphPosition) {
    let id = '';
    edit((g) => {
      id = create(g);
      const group = groupAt(g, position);
      if (group) placeInGroup(g, id, position, group.id);
    });
    selected.value = id;
    return id;
  }
  function addNote(position: GraphPosition) {
    let id = '';
    edit((g) => (id = addNoteTo(g, position)));
    return id;
  }
  function duplicate(id: string) {
    if (removableIds(graph.value, [id]).size > 0) edit((g) => duplicateNode(g, id));
  }
  function remove(ids: string[], edgeIds: string[] = []) {
    const drop = removableIds(graph.value, ids);
    const dropEdges = new Set(edgeIds.filter((id) => graph.value.edges.some((e) => e.id === id)));
    if (drop.size === 0 && dropEdges.size === 0) return;
    edit((g) => removeElements(g, drop, dropEdges));
    if (selected.value && drop.has(selected.value)) selected.value = undefined;
  }
  function connect(c: { source: string; target: string; sourceHandle?: string | null; targetHandle?: string | null }) {
    const e = connectionToEdge(graph.value, c as never);
    if (e) edit((g) => g.edges.push(e));
  }
  /**
   * Finished drags. `absolute` (the canvas position) and `size` let a node dropped into a group
   * join its body, and one dragged out of its group leave it.
   */
  function move(list: Array<{ id: string; position: GraphPosition; absolute?: GraphPosition; size?: { width: number; height: number } }>) {
    const apply = (g: WorkflowGraph) => {
      let changed = applyPositions(g, list);
      for (const m of list) {
        const node = g.nodes.find((n) => n.id === m.id);
        if (!m.absolute || !node || node.type === 'start' || node.type === 'forEach') continue;
        const centre = { x: m.absolute.x + (m.size?.width ?? 0) / 2, y: m.absolute.y + (m.size?.height ?? 0) / 2 };
        const group = groupAt(g, centre)?.id;
        if (group !== node.parentId) changed = placeInGroup(g, m.id, m.absolute, group) || changed;
      }
      return changed;
    };
    if (!apply(json(graph.value))) return;
    edit((g) => void apply(g));
  }
  /** A group's new size (and position, when resized from its left or top edge). */
  function resizeGroup(id: string, size: { width: number; height: number }) {
    const node = graph.value.nodes.find((n) => n.id === id);
    if (node?.type !== 'forEach') return;
    const width = Math.round(size.width);
    const height = Math.round(size.height);
    if (node.data.width === width && node.data.height === height) return;
    edit(() => Object.assign(node.data, { width, height }));
  }
  /** A condition's cases; upstream nodes its comparisons reference get connected. */
  function setCases(nodeId: string, cases: ConditionCase[]) {
    const node = findStep(nodeId);
    if (node?.type !== 'condition') return;
    edit(() => {
      node.data.cases = json(cases);
      connectReferenced(nodeId, cases);
    });
  }
  /** Connects every step `value` references (by id) to `nodeId`, within its level. */
  function connectReferenced(nodeId: string, value: unknown) {
    for (const { token } of collectReferences(value)) {
      const from = token.ok && token.ref.kind === 'node' ? token.ref.id : undefined;
      if (from && from !== nodeId && findStep(from)) ensureEdge(graph.value, from, nodeId);
    }
  }

  function setArgument(nodeId: string, key: string, value: unknown, source?: InputSource) {
    const node = findStep(nodeId);
    if (!node) return;
    edit(() => {
      if (value === undefined) delete node.data.arguments[key];
      else node.data.arguments[key] = value;
      if (source) node.data.sources = { ...(node.data.sources ?? {}), [key]: source };
      const from = referencedNode(value);
      if (from && from !== nodeId && findStep(from)) ensureEdge(graph.value, from, nodeId);
    });
  }
  function setStepData(nodeId: string, patch: Partial<StepNode['data']>) {
    const node = findStep(nodeId);
    if (node)
      edit(() => {
        Object.assign(node.data, patch);
        if ('items' in patch) connectReferenced(nodeId, patch.items);
      });
  }
  function setFields(fields: StartField[]) {
    const start = graph.value.nodes.find((n) => n.type === 'start');
    if (start && start.type === 'start') edit(() => (start.data.fields = json(fields)));
  }
  function setNoteText(id: string, text: string) {
    const note = graph.value.notes.find((n) => n.id === id);
    if (note && note.data.text !== text) edit(() => (note.data.text = text));
  }
  function setMeta(patch: { name?: string; description?: string; goal?: string; errorWorkflowId?: string }) {
    history.record(doc());
    if (patch.errorWorkflowId !== undefined) errorWorkflowId.value = patch.errorWorkflowId;
    if (patch.goal !== undefined) goal.value = patch.goal;
    if (patch.name !== undefined) name.value = patch.name;
    if (patch.description !== undefined) description.value = patch.description;
    historyTick.value++;
  }
  function pin(nodeId: string, result: unknown) {
    setStepData(nodeId, { pinned: { result: json(result) } });
  }
  function unpin(nodeId: string) {
    const node = findStep(nodeId);
    if (node) edit(() => delete node.data.pinned);
  }

  function draft() {
    const { plan, inputSchema } = graphToPlan(graph.value, goal.value.trim() || undefined);
    // the host keeps a field left out, so "none" is sent as null (which clears it)
    return { name: name.value.trim() || 'Untitled flow', description: description.value, inputSchema, plan, graph: json(graph.value), errorWorkflowId: errorWorkflowId.value || null };
  }

  /** Saves (create or revision-checked update). Returns the saved definition, or undefined. */
  async function save(): Promise<WorkflowDefinition | undefined> {
    saving.value = true;
    saveError.value = undefined;
    try {
      const body = draft();
      const def = workflowId.value ? await api().workflows.save(workflowId.value, body, meta.value.revision) : await api().workflows.create(body);
      const keepSelection = selected.value;
      workflowId.value = def.id;
      meta.value = { state: def.state, revision: def.revision, publishedVersion: def.publishedVersion ?? null, hasDraftChanges: def.hasDraftChanges === true };
      saved.value = docJson();
      selected.value = keepSelection;
      return def;
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) conflict.value = true;
      else if (e instanceof ApiError) saveError.value = e;
      else saveError.value = new ApiError(0, 'unknown', (e as Error).message);
      return undefined;
    } finally {
      saving.value = false;
    }
  }

  /** The host saved exactly what is on the canvas (the AI panel's auto-save): adopt its id and revision. */
  function adoptSaved(flow: { id: string; revision: number; state: 'draft' | 'published' }) {
    workflowId.value = flow.id;
    meta.value = { ...meta.value, state: flow.state, revision: flow.revision, hasDraftChanges: flow.state === 'published' };
    saved.value = docJson();
  }
  /** Replaces the whole graph as one undoable edit (an applied AI proposal). */
  function replaceGraph(next: WorkflowGraph) {
    edit((g) => {
      g.nodes = next.nodes;
      g.edges = next.edges;
      g.notes = next.notes;
      g.version = next.version;
    });
  }
  async function reload() {
    const id = workflowId.value;
    saved.value = docJson(); // the user chose to drop local edits
    await load(id);
  }

  /**
   * The version state a person needs: a draft never published; a published version with nothing
   * newer; or a published version with newer draft changes (after an edit or a restore).
   */
  const versionState = computed<'draft' | 'published' | 'changed'>(() => {
    if (!meta.value.publishedVersion) return 'draft';
    return meta.value.hasDraftChanges || dirty.value ? 'changed' : 'published';
  });

  async function publish() {
    if (!workflowId.value) return;
    try {
      const def = await api().workflows.publish(workflowId.value, meta.value.revision);
      meta.value = { state: def.state, revision: def.revision, publishedVersion: def.publishedVersion ?? null, hasDraftChanges: def.hasDraftChanges === true };
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) conflict.value = true;
      else saveError.value = e as ApiError;
    }
  }

  async function restore(version: number) {
    if (!workflowId.value) return;
    try {
      const def = await api().workflows.restore(workflowId.value, version, meta.value.revision);
      history.record(doc());
      adopt(def);
      historyTick.value++;
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) conflict.value = true;
      else saveError.value = e as ApiError;
    }
  }

  return {
    workflowId, meta, versionState, name, description, goal, errorWorkflowId, graph, catalog, secretNames, catalogError, sync, selected, loadError, saveError, conflict, saving,
    lastResults, badges, loops, loads, snap, background, dirty, diagnostics, byNode, canUndo, canRedo, isNew,
    init, load, loadCatalog, adoptSaved, replaceGraph, findStep, toolOf, addTool, addModel, addCondition, addForEach, addInput, addNote, resizeGroup, setCases, duplicate, remove, connect, move, setArgument,
    setStepData, setFields, setNoteText, setMeta, pin, unpin, undo, redo, edit, save, reload, publish, restore, draft,
  };
});
