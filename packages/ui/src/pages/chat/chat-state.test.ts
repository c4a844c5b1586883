import { describe, expect, it } from 'vitest';
import { answerApproval, applyFrame, type ChatItem, itemsFromMessages } from './chat-state';
import { entryName } from './chat.api';
import { createSseParser } from './sse-parser';

describe('chat SSE parser', () => {
  it('parses frames split across chunks, skipping comments', () => {
    const p = createSseParser();
    expect(p.push(': connected\n\nid: 1\nevent: tok')).toEqual([]);
    const frames = p.push('en\ndata: {"text":"Hel"}\n\nid: 2\r\nevent: token\r\ndata: {"text":"lo"}\r\n\r\n');
    expect(frames).toEqual([
      { event: 'token', id: '1', data: '{"text":"Hel"}' },
      { event: 'token', id: '2', data: '{"text":"lo"}' },
    ]);
  });
});

describe('chat transcript fold', () => {
  it('streams tokens into one assistant message, and closes it on done', () => {
    let items: ChatItem[] = [{ kind: 'user', text: 'hi' }];
    items = applyFrame(items, 'start', { conversationId: 'c1' });
    items = applyFrame(items, 'token', { text: 'Hel' });
    items = applyFrame(items, 'token', { text: 'lo' });
    expect(items[1]).toEqual({ kind: 'assistant', text: 'Hello', streaming: true });
    items = applyFrame(items, 'done', { text: 'Hello' });
    expect(items[1]).toEqual({ kind: 'assistant', text: 'Hello' });
  });

  it('pairs tool call and result frames by callId; errors and approvals become cards', () => {
    let items: ChatItem[] = [];
    items = applyFrame(items, 'tool', { phase: 'call', name: 'echo', callId: 'k1', arguments: { text: 'x' } });
    items = applyFrame(items, 'approval_requested', { gateId: 'g1', tool: 'write_file', effect: 'write', arguments: { path: 'a' } });
    items = applyFrame(items, 'tool', { phase: 'result', name: 'echo', callId: 'k1', result: { ok: true } });
    items = applyFrame(items, 'tool', { phase: 'result', name: 'orphan', callId: 'k9', error: 'denied' });
    expect(items[0]).toMatchObject({ kind: 'tool', name: 'echo', done: true, result: { ok: true } });
    expect(items[1]).toMatchObject({ kind: 'approval', gateId: 'g1', tool: 'write_file' });
    expect(items[2]).toMatchObject({ kind: 'tool', name: 'orphan', error: 'denied', done: true });
    expect(answerApproval(items, 'g1', false)[1]).toMatchObject({ answer: 'rejected' });
    expect(applyFrame(items, 'error', { message: 'boom' }).at(-1)).toEqual({ kind: 'error', text: 'boom' });
    expect(applyFrame(items, 'weird', {})).toEqual(items);
  });

  it('rebuilds a stored conversation (AI SDK messages with tool parts)', () => {
    const items = itemsFromMessages([
      { message: { role: 'user', content: 'list files' } },
      { message: { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }, { type: 'tool-call', toolCallId: 't1', toolName: 'ls', input: { dir: '.' } }] } },
      { message: { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'ls', output: { type: 'json', value: ['a'] } }] } },
      { message: { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't2', toolName: 'rm', output: { type: 'error-text', value: 'denied' } }] } },
      { message: { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] } },
    ]);
    expect(items).toEqual([
      { kind: 'user', text: 'list files' },
      { kind: 'assistant', text: 'Sure.' },
      { kind: 'tool', callId: 't1', name: 'ls', arguments: { dir: '.' }, result: ['a'], done: true },
      { kind: 'tool', callId: 't2', name: 'rm', error: 'denied', done: true },
      { kind: 'assistant', text: 'Done.' },
    ]);
  });

  it('makes file entry names the host accepts', () => {
    expect(entryName('Q3 report.xlsx', new Set())).toBe('Q3_report');
    expect(entryName('2024.csv', new Set())).toBe('file');
    expect(entryName('报告.txt', new Set())).toBe('file');
    expect(entryName('a.txt', new Set(['a']))).toBe('a_2');
    expect(entryName('x'.repeat(200), new Set()).length).toBeLessThanOrEqual(64);
    for (const n of ['Q3 report.xlsx', '../../etc', '-x', '报告']) expect(entryName(n, new Set())).toMatch(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/);
  });
});
