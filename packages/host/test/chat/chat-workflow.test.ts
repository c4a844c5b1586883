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
});
