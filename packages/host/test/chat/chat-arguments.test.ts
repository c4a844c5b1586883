import { describe, expect, it } from 'vitest';
import { scriptedHost } from '../support/scripted-host';
import { chat, framesOf } from './chat-client';

/** In chat, a tool call's arguments are validated before anyone is asked to approve it. */

const { t, llm } = scriptedHost({
  setup: async () => {
    await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }], defaultBackend: 'local' });
  },
});

describe('chat approvals come after argument validation', () => {
  it('a call with invalid arguments is refused without an approval card and never runs', async () => {
    const before = t.tools.calls.get('write_note') ?? 0;
    let told = '';
    llm.push({ toolCalls: [{ name: 'write_note', arguments: { text: 42 } }] }, (req) => {
      told = JSON.stringify(req.messages.at(-1));
      return { text: 'Could not write.' };
    });
    const r = await chat(t, { message: 'write 42', permissionMode: 'ask' }, async (f) => {
      if (f.event === 'approval_requested') await t.api('POST', `/api/chat/${f.data.conversationId}/approve`, { gateId: f.data.gateId, approve: true });
    });
    expect(framesOf(r, 'approval_requested')).toHaveLength(0);
    expect(framesOf(r, 'tool').at(-1)?.data.error).toMatch(/^invalid arguments: \.text: text must be text\./);
    expect(told).toContain('invalid arguments');
    expect(t.tools.calls.get('write_note') ?? 0).toBe(before);
    expect(r.frames.at(-1)?.event).toBe('done');
  });

  it('a call with valid arguments still asks, and runs when approved', async () => {
    const before = t.tools.calls.get('write_note') ?? 0;
    llm.push({ toolCalls: [{ name: 'write_note', arguments: { text: 'ok' } }] }, { text: 'Written.' });
    const r = await chat(t, { message: 'write ok', permissionMode: 'ask' }, async (f) => {
      if (f.event === 'approval_requested') await t.api('POST', `/api/chat/${f.data.conversationId}/approve`, { gateId: f.data.gateId, approve: true });
    });
    expect(framesOf(r, 'approval_requested')).toHaveLength(1);
    expect(t.tools.calls.get('write_note')).toBe(before + 1);
  });
});
