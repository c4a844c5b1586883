import { describe, expect, it } from 'vitest';
import type { ChatRequestBody, ScriptedTurn } from '../support/scripted-openai';
import { scriptedHost } from '../support/scripted-host';
import { chat, framesOf } from './chat-client';

const { t, llm } = scriptedHost({
  setup: async () => {
    await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }] });
  },
});

/** Chat turns in order; the nested workflow run's summary request is answered on the side. */
const script = (turns: ScriptedTurn[]) => {
  const isSummary = (req: ChatRequestBody) => JSON.stringify(req.messages[0]).includes('You summarize');
  for (let i = 0; i < turns.length + 1; i++) llm.push((req) => (isSummary(req) ? { text: 'workflow summary' } : (turns.shift() ?? { text: 'unexpected' })));
};

describe('chat and published workflows', () => {
  it('calls a published workflow as run_workflow_<id> through the same runner', async () => {
    const created = await t.api('POST', '/api/workflows', {
      name: 'Shout',
      description: 'Echo a text back',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      plan: { steps: [{ id: 'say', tool: 'echo', arguments: { text: '{{inputs.text}}' } }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    const published = await t.api('POST', `/api/workflows/${id}/publish`, { revision: created.body.revision });
    expect(published.status, JSON.stringify(published.body)).toBe(200);

    script([{ toolCalls: [{ name: `run_workflow_${id}`, arguments: { text: 'hello from chat' } }] }, { text: 'The workflow echoed your text.' }]);
    const start = llm.requests.length;

    const r = await chat(t, { message: 'run the shout workflow', permissionMode: 'full-access' });
    expect(r.frames.at(-1)?.event, JSON.stringify(r.frames.at(-1))).toBe('done');
    expect(llm.requests[start]?.tools?.map((x) => x.function.name)).toContain(`run_workflow_${id}`);
    const result = framesOf(r, 'tool').find((f) => f.data.phase === 'result');
    expect(result?.data.name).toBe(`run_workflow_${id}`);
    expect(JSON.stringify(result?.data.result)).toContain('hello from chat');
    expect(r.frames.at(-1)?.data.text).toBe('The workflow echoed your text.');
  });

  it('an input step inside a workflow called as a tool waits in the inbox; answering it resumes the chat\'s tool call', async () => {
    const created = await t.api('POST', '/api/workflows', {
      name: 'Ask a number',
      description: 'Asks a person for a number and echoes it',
      inputSchema: { type: 'object', properties: {} },
      plan: { steps: [{ id: 'ask', kind: 'input', title: 'How many?', form: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }, { id: 'say', tool: 'echo', arguments: { value: '{{node.ask.result.n}}' }, dependsOn: ['ask'] }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    expect((await t.api('POST', `/api/workflows/${id}/publish`, { revision: created.body.revision })).status).toBe(200);
    script([{ toolCalls: [{ name: `run_workflow_${id}`, arguments: {} }] }, { text: 'You answered.' }]);

    const talking = chat(t, { message: 'ask me for a number', permissionMode: 'full-access' });
    // the chat's tool call waits on the inner run's input, raised in the inbox like any other
    let item: { id: string; kind: string; title: string; runId: string; workflowId?: string } | undefined;
    await expect.poll(async () => (item = (await t.api('GET', '/api/inbox')).body.items.find((i: { title: string }) => i.title === 'How many?'))?.kind, { timeout: 20_000 }).toBe('input');
    expect(item?.workflowId).toBe(id);
    expect((await t.api('GET', `/api/agent/runs/${item?.runId}`)).body.status).toBe('awaiting_input');
    // a bad answer is refused and the gate stays; a good one lets the tool call finish
    const bad = await t.api('POST', `/api/inbox/${item?.id}`, { values: { n: 'many' } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'input_values_invalid']);
    expect((await t.api('POST', `/api/inbox/${item?.id}`, { values: { n: 7 } })).status).toBe(200);
    const r = await talking;
    expect(r.frames.at(-1)?.event, JSON.stringify(r.frames.at(-1))).toBe('done');
    const result = framesOf(r, 'tool').find((f) => f.data.phase === 'result');
    expect(result?.data.name).toBe(`run_workflow_${id}`);
    expect(JSON.stringify(result?.data.result)).toContain('"echoed":7');
    expect((await t.api('GET', '/api/inbox')).body.items).toEqual([]);
  });
});
