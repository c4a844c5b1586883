import { canonicalJson, emptyGraph, graphToPlan, type PlanStep, planToGraph, type WorkflowGraph } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import type { ChatRequestBody, ScriptedTurn } from '../support/scripted-openai';
import { scriptedHost } from '../support/scripted-host';
import { type ChatReply, framesOf } from './chat-client';

/** The builder's AI panel over real HTTP/SSE, with the scripted OpenAI-compatible model. */

const { t, llm } = scriptedHost({
  setup: async () => {
    await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }] });
  },
});

/** Turns in order; a nested workflow run's summary request is answered on the side. */
let turns: ScriptedTurn[] = [];
const script = (next: ScriptedTurn[]) => {
  turns = [...next];
  const isSummary = (req: ChatRequestBody) => JSON.stringify(req.messages[0]).includes('You summarize');
  for (let i = 0; i < next.length + 1; i++) llm.push((req) => (isSummary(req) ? { text: 'workflow summary' } : (turns.shift() ?? { text: 'unexpected' })));
};

async function assist(body: unknown): Promise<ChatReply> {
  const res = await fetch(`${t.host.url}/api/builder/assist`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return { status: res.status, body: await res.json(), frames: [] };
  const text = await res.text();
  const frames = text
    .split('\n\n')
    .map((raw) => {
      const f: { event?: string; id?: string; data?: unknown } = {};
      for (const line of raw.split('\n')) {
        if (line.startsWith('event: ')) f.event = line.slice(7);
        else if (line.startsWith('id: ')) f.id = line.slice(4);
        else if (line.startsWith('data: ')) f.data = JSON.parse(line.slice(6));
      }
      return f;
    })
    .filter((f) => f.event) as ChatReply['frames'];
  return { status: res.status, frames };
}

const toolResult = (r: ChatReply, name: string) => framesOf(r, 'tool').find((f) => f.data.phase === 'result' && f.data.name === name)?.data;

function echoFlow(): WorkflowGraph {
  const g = emptyGraph();
  g.nodes[0] = { id: 'start', type: 'start', position: { x: 80, y: 200 }, data: { fields: [{ name: 'text', type: 'text', required: true }] } };
  g.nodes.push({ id: 'say', type: 'tool', tool: { name: 'echo' }, position: { x: 380, y: 200 }, data: { arguments: { text: '{{inputs.text}}' } } });
  g.edges.push({ id: 'e_start_say', source: 'start', target: 'say' });
  return g;
}

describe('builder AI panel', () => {
  it('inspects a canvas with a dangling connection and diagnoses it, saving nothing', async () => {
    const g = echoFlow();
    g.edges.push({ id: 'ghost', source: 'say', target: 'gone' });
    const before = (await t.api('GET', '/api/workflows')).body;
    script([{ toolCalls: [{ name: 'inspect_current_flow', arguments: {} }] }, { toolCalls: [{ name: 'diagnose_current_flow', arguments: {} }] }, { text: 'The connection say → gone points at a missing node.' }]);
    const start = llm.requests.length;
    const r = await assist({ message: 'why does my flow not save?', canvas: { graph: g, name: 'Echo', lastRunError: 'boom' } });
    expect(r.frames.at(-1)?.event, JSON.stringify(r.frames.at(-1))).toBe('done');
    expect(r.frames[0]?.data).toMatchObject({ workflow: null, problems: 1 });
    const offered = llm.requests[start]?.tools?.map((x) => x.function.name);
    expect(offered).toEqual(expect.arrayContaining(['inspect_current_flow', 'diagnose_current_flow', 'edit_current_flow', 'run_current_flow', 'echo']));
    const inspected = toolResult(r, 'inspect_current_flow')?.result;
    expect(inspected.graph.edges.map((e: { id: string }) => e.id)).toContain('ghost');
    expect(inspected.plan.steps).toEqual([{ id: 'say', tool: 'echo', arguments: { text: '{{inputs.text}}' } }]);
    expect(inspected.inputContract.values).toEqual(['text']);
    expect(inspected.tools.find((x: { name: string }) => x.name === 'echo')).toMatchObject({ effect: 'read', inputSchema: { type: 'object' } });
    const diagnosed = toolResult(r, 'diagnose_current_flow')?.result;
    expect(diagnosed.valid).toBe(false);
    expect(diagnosed.problems).toEqual([expect.objectContaining({ code: 'edge_dangling', edgeId: 'ghost' })]);
    expect(diagnosed.byKind.danglingConnections).toHaveLength(1);
    expect(diagnosed.lastRunError).toBe('boom');
    // the model saw the diagnosis, and nothing was written
    expect(JSON.stringify(llm.requests.at(-1)?.messages)).toContain('edge_dangling');
    expect((await t.api('GET', '/api/workflows')).body).toEqual(before);
  });

  it('builds a three-node flow from an empty canvas as a proposal, never a write', async () => {
    const before = (await t.api('GET', '/api/workflows')).body;
    const steps = [
      { id: 'first', title: 'First', tool: 'echo', arguments: { text: '{{inputs.topic}}' } },
      { id: 'second', tool: 'echo', arguments: { value: '{{node.first.result}}' }, dependsOn: ['first'] },
      { id: 'third', tool: 'echo', arguments: { value: '{{node.second.result}}' }, dependsOn: ['second'] },
    ];
    const inputSchema = { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] };
    script([{ toolCalls: [{ name: 'edit_current_flow', arguments: { mode: 'replace', steps, inputSchema, summary: 'Three echo steps' } }] }, { text: 'Here is a three-step flow; apply it to save.' }]);
    const r = await assist({ message: 'build me a three step echo flow', canvas: { graph: emptyGraph(), name: '' } });
    expect(r.frames.at(-1)?.event).toBe('done');
    const [proposal] = framesOf(r, 'proposal');
    expect(proposal?.data.diff.nodes.added).toEqual(['first', 'second', 'third']);
    expect(proposal?.data.diff.nodes.changed).toEqual(['start']);
    expect(proposal?.data.diff.edges.added).toHaveLength(3);
    expect(proposal?.data.problems).toEqual([]);
    expect(proposal?.data.base.fingerprint).toMatch(/^[0-9a-f]{8}$/);
    expect(graphToPlan(proposal?.data.graph).plan.steps).toEqual(steps);
    expect(graphToPlan(proposal?.data.graph).inputSchema).toEqual(inputSchema);
    expect(toolResult(r, 'edit_current_flow')?.result).toMatchObject({ proposalId: proposal?.data.proposalId });
    expect((await t.api('GET', '/api/workflows')).body).toEqual(before);
  });

  it('an edit keeps positions, notes and connections of unchanged steps; a malformed proposal is an error result', async () => {
    const g = echoFlow();
    g.nodes[1] = { ...g.nodes[1], position: { x: 999, y: 42 } } as WorkflowGraph['nodes'][number];
    g.notes.push({ id: 'n1', type: 'note', position: { x: 0, y: 0 }, data: { text: 'keep me' } });
    script([
      { toolCalls: [{ name: 'edit_current_flow', arguments: { steps: [{ id: 'say', tool: 'echo', arguments: { text: '{{inputs.text}}' } }, { id: 'more', tool: 'echo', arguments: {}, dependsOn: ['say'] }] } }] },
      { toolCalls: [{ name: 'edit_current_flow', arguments: { steps: [{ id: '1bad' }] } }] },
      { text: 'ok' },
    ]);
    const r = await assist({ message: 'add a step', canvas: { graph: g } });
    const [proposal] = framesOf(r, 'proposal');
    expect(proposal?.data.diff).toEqual({ nodes: { added: ['more'], changed: [], removed: [] }, edges: { added: [{ source: 'say', target: 'more' }], removed: [] } });
    const say = proposal?.data.graph.nodes.find((n: { id: string }) => n.id === 'say');
    expect(say.position).toEqual({ x: 999, y: 42 });
    expect(proposal?.data.graph.notes).toEqual(g.notes);
    const results = framesOf(r, 'tool').filter((f) => f.data.phase === 'result' && f.data.name === 'edit_current_flow');
    expect(results[1]?.data.error).toMatch(/not a valid plan/);
    expect(framesOf(r, 'proposal')).toHaveLength(1);
  });

  it('adds a condition and a loop, then changes them, as proposals the canvas can show', async () => {
    const steps = [
      { id: 'say', tool: 'echo', arguments: { text: '{{inputs.text}}' } },
      { id: 'check', kind: 'condition', dependsOn: ['say'], cases: [{ name: 'long', when: { all: [{ left: '{{node.say.result.echoed}}', op: 'matches', right: '^.{20,}$' }] } }] },
      { id: 'manager', tool: 'echo', arguments: { text: 'manager' }, dependsOn: ['check:long'] },
      { id: 'team', tool: 'echo', arguments: { text: 'team' }, dependsOn: ['check:else'] },
      { id: 'each', kind: 'forEach', items: ['north', 'south'], concurrency: 2, dependsOn: ['say'], steps: [{ id: 'part', tool: 'echo', arguments: { text: '{{item}} #{{index}}' } }] },
    ];
    script([{ toolCalls: [{ name: 'edit_current_flow', arguments: { steps, summary: 'Branch on length, loop over parts' } }] }, { text: 'Proposed.' }]);
    const r = await assist({ message: 'send long texts to the manager, and echo each part', canvas: { graph: echoFlow() } });
    const [proposal] = framesOf(r, 'proposal');
    expect(proposal?.data.problems).toEqual([]);
    expect(proposal?.data.diff.nodes.added).toEqual(expect.arrayContaining(['check', 'manager', 'team', 'each', 'part']));
    const graph = proposal?.data.graph as WorkflowGraph;
    const node = (id: string) => graph.nodes.find((n) => n.id === id) as { type: string; parentId?: string };
    expect([node('check').type, node('each').type, node('part').parentId]).toEqual(['condition', 'forEach', 'each']);
    expect(graph.edges.find((e) => e.target === 'manager')?.sourceHandle).toBe('port:long');
    const compiled = graphToPlan(graph).plan.steps;
    expect(canonicalJson(compiled.find((x) => x.id === 'check'))).toBe(canonicalJson(steps[1]));
    expect(canonicalJson(compiled.find((x) => x.id === 'each'))).toBe(canonicalJson(steps[4]));

    // change the comparison and the loop on the proposed canvas: both nodes change, nothing else
    const changed = structuredClone(steps) as PlanStep[];
    changed[1] = { ...changed[1], cases: [{ name: 'long', when: { all: [{ left: '{{node.say.result.echoed}}', op: 'contains', right: 'urgent' }] } }] } as PlanStep;
    changed[4] = { ...changed[4], concurrency: 4 } as PlanStep;
    script([{ toolCalls: [{ name: 'edit_current_flow', arguments: { steps: changed } }] }, { text: 'Changed.' }]);
    const again = await assist({ message: 'branch on "urgent" instead, 4 at a time', canvas: { graph } });
    const [edit] = framesOf(again, 'proposal');
    expect(edit?.data.diff).toEqual({ nodes: { added: [], changed: ['check', 'each'], removed: [] }, edges: { added: [], removed: [] } });
    expect(graphToPlan(edit?.data.graph).plan.steps.find((x) => x.id === 'check')?.cases?.[0]?.when?.all?.[0]).toEqual({ left: '{{node.say.result.echoed}}', op: 'contains', right: 'urgent' });
  });

  it('explains a connection to a port the condition lacks and a bad comparison, naming step and field, in English and Chinese', async () => {
    const g = planToGraph({
      steps: [
        { id: 'check', kind: 'condition', cases: [{ name: 'big', when: { all: [{ left: '{{inputs.n}}', op: 'exists' }, { left: '{{inputs.n}}', op: 'greater', right: 1000 }] } }] },
        { id: 'mail', tool: 'echo', arguments: { text: 'x' }, dependsOn: ['check:huge'] },
      ],
    }, { type: 'object', properties: { n: { type: 'number' } } });
    const diagnose = async (headers: Record<string, string>) => {
      script([{ toolCalls: [{ name: 'diagnose_current_flow', arguments: {} }] }, { text: 'explained' }]);
      const res = await fetch(`${t.host.url}/api/builder/assist`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ message: 'why?', canvas: { graph: g } }) });
      const text = await res.text();
      const m = /event: tool\ndata: (.*"phase":"result".*)\n/.exec(text);
      return JSON.parse(m?.[1] ?? '{}').result;
    };
    const en = await diagnose({});
    expect(en.valid).toBe(false);
    expect(en.byKind.wrongPorts).toHaveLength(1);
    expect(en.byKind.badComparisons).toHaveLength(1);
    const port = en.problems.find((p: { code: string }) => p.code === 'step_unknown_dependency');
    expect(port).toMatchObject({ nodeId: 'mail', field: 'dependsOn' });
    expect(port.explanation).toBe('Step "mail" is connected to the port "huge" of condition "check" (its field dependsOn), but "check" has no case "huge": its ports are "big", "else". Connect the step to one of those ports, or add a case named "huge" to "check".');
    const cmp = en.problems.find((p: { code: string }) => p.code === 'condition_operator_unknown');
    expect(cmp).toMatchObject({ nodeId: 'check', field: 'cases[0].when.all[1].op' });
    expect(cmp.explanation).toContain('In condition "check", case "big", comparison 2 (field cases[0].when.all[1].op): Step "check": "greater" is not an operator');
    expect(cmp.explanation).toContain('Numbers compare with gt, gte, lt or lte');
    const zh = await diagnose({ 'accept-language': 'zh-CN' });
    const zport = zh.problems.find((p: { code: string }) => p.code === 'step_unknown_dependency');
    expect(zport.explanation).toContain('步骤 "mail" 连接到了条件 "check" 的端口 "huge"（字段 dependsOn）');
    expect(zport.message).toContain('步骤 "mail"');
    const zcmp = zh.problems.find((p: { code: string }) => p.code === 'condition_operator_unknown');
    expect(zcmp.explanation).toContain('在条件 "check" 的分支 "big" 中，第 2 个比较（字段 cases[0].when.all[1].op）');
    expect(zcmp.explanation).toContain('数字用 gt、gte、lt 或 lte 比较');
  });

  it('refuses run_current_flow for an invalid graph', async () => {
    const g = echoFlow();
    (g.nodes[1] as { data: { arguments: Record<string, unknown> } }).data.arguments = { text: '{{node.ghost.result}}' };
    script([{ toolCalls: [{ name: 'run_current_flow', arguments: {} }] }, { text: 'It cannot run yet.' }]);
    const r = await assist({ message: 'run it', permissionMode: 'full-access', canvas: { graph: g, name: 'Broken' } });
    expect(r.frames[0]?.data.workflow).toBeNull();
    const result = toolResult(r, 'run_current_flow');
    expect(result?.error).toMatch(/cannot run/);
    expect(result?.error).toMatch(/ghost/);
  });

  it('auto-saves a valid canvas first, then streams a real run of the saved definition', async () => {
    script([{ toolCalls: [{ name: 'run_current_flow', arguments: { text: 'hello from the panel' } }] }, { text: 'It ran.' }]);
    const r = await assist({ message: 'run it', permissionMode: 'full-access', canvas: { graph: echoFlow(), name: 'Panel echo' } });
    expect(r.frames.at(-1)?.event, JSON.stringify(r.frames.at(-1))).toBe('done');
    const workflow = r.frames[0]?.data.workflow;
    expect(workflow).toMatchObject({ revision: 1, state: 'draft', autoSaved: true });
    const saved = await t.api('GET', `/api/workflows/${workflow.id}`);
    expect(saved.body.name).toBe('Panel echo');
    expect(canonicalJson(saved.body.graph)).toBe(canonicalJson(echoFlow()));
    expect(framesOf(r, 'tool').map((f) => `${f.data.phase}:${f.data.name}`)).toEqual(['call:run_current_flow', 'result:run_current_flow']);
    expect(JSON.stringify(toolResult(r, 'run_current_flow')?.result)).toContain('hello from the panel');
    const runs = await t.api('GET', '/api/agent/runs?q=');
    expect(JSON.stringify(runs.body)).toContain(workflow.id);

    // unchanged canvas: no new revision; a stale revision after someone else saved: 409, nothing streamed
    script([{ text: 'nothing to do' }]);
    const again = await assist({ message: 'hi', canvas: { graph: echoFlow(), name: 'Panel echo', workflowId: workflow.id, revision: 1 } });
    expect(again.frames[0]?.data.workflow).toMatchObject({ id: workflow.id, revision: 1, autoSaved: false });
    const edited = echoFlow();
    edited.nodes[1] = { ...edited.nodes[1], position: { x: 500, y: 500 } } as WorkflowGraph['nodes'][number];
    await t.api('PUT', `/api/workflows/${workflow.id}`, { name: 'Panel echo', inputSchema: saved.body.inputSchema, plan: saved.body.plan, graph: edited, revision: 1 });
    const stale = await assist({ message: 'hi', canvas: { graph: echoFlow(), name: 'Panel echo 2', workflowId: workflow.id, revision: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('workflow_revision_conflict');
  });

  it('asks before running a flow with a write step in ask mode, like chat', async () => {
    const g = emptyGraph();
    g.nodes.push({ id: 'note', type: 'tool', tool: { name: 'write_note' }, position: { x: 380, y: 200 }, data: { arguments: { text: 'x' } } });
    g.edges.push({ id: 'e', source: 'start', target: 'note' });
    script([{ toolCalls: [{ name: 'run_current_flow', arguments: {} }] }, { text: 'Declined.' }]);
    const res = await fetch(`${t.host.url}/api/builder/assist`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'run', canvas: { graph: g, name: 'Writer' } }) });
    const decoder = new TextDecoder();
    let buffer = '';
    let answered = false;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      const m = /event: approval_requested\ndata: (.*)\n/.exec(buffer);
      if (m && !answered) {
        answered = true;
        const gate = JSON.parse(m[1] as string);
        expect(gate.tool).toBe('run_current_flow');
        expect(gate.effect).toBe('write');
        const a = await t.api('POST', `/api/chat/${gate.conversationId}/approve`, { gateId: gate.gateId, approve: false });
        expect(a.status).toBe(200);
      }
    }
    expect(answered).toBe(true);
    expect(buffer).toContain('denied');
    expect(buffer).toContain('event: done');
  });

  it('refuses a canvas that is not a graph, naming the field, before anything starts', async () => {
    const r = await assist({ message: 'hi', canvas: { graph: { nodes: 'no' } } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('assist_canvas_invalid');
    expect(r.body.error.message).toContain('canvas.graph');
  });
});
