import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stableHash } from '@fengyu/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/tools/tool';
import { scriptedHost } from '../support/scripted-host';
import { chat, framesOf } from './chat-client';

const dir = mkdtempSync(join(tmpdir(), 'fengyu-chat-files-'));
const book = join(dir, 'book.xlsx');
const seen: Array<Record<string, unknown>> = [];

const fileTool = (name: string, properties: Record<string, unknown>): Tool => {
  const inputSchema = { type: 'object', properties };
  return {
    name,
    description: `test ${name}`,
    inputSchema,
    effect: 'read',
    source: 'builtin',
    id: `builtin:${name}`,
    schemaRevision: stableHash(inputSchema),
    idempotent: true,
    available: true,
    invoke: async (args) => {
      seen.push({ tool: name, ...args });
      return { ok: true };
    },
  };
};

const { t, llm } = scriptedHost({
  setup: async () => {
    writeFileSync(book, 'not really a workbook');
    await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }] });
  },
  host: () => ({
    beforeDomains: (ctx) => {
      ctx.catalog.register({
        kind: 'builtin',
        list: async () => [fileTool('analyze_book', { filePath: { type: 'string' } }), fileTool('copy_book', { filePath: { type: 'string' }, outputDir: { type: 'string' } })],
      });
    },
  }),
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('chat attachments (FileRef routes)', () => {
  it('route B: a tool with one file parameter gets the granted path injected', async () => {
    llm.push({ toolCalls: [{ name: 'analyze_book', arguments: { filePath: 'book.xlsx' } }] }, { text: 'Analyzed.' });
    const r = await chat(t, { message: 'analyze my book', files: [{ name: 'book', nativePath: book }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.frames.at(-1)?.event, JSON.stringify(r.frames.at(-1))).toBe('done');
    expect(seen.at(-1)).toEqual({ tool: 'analyze_book', filePath: realpathSync(book) });
    const call = framesOf(r, 'tool')[0];
    expect(call?.data.arguments.filePath).toBe(realpathSync(book));
  });

  it('route A: the grants are listed in the system prompt; multi-file tools keep the model\'s arguments', async () => {
    const start = llm.requests.length;
    llm.push(
      (req) => ({ toolCalls: [{ name: 'copy_book', arguments: { filePath: JSON.stringify(req.messages[0]).includes(realpathSync(book)) ? realpathSync(book) : 'missing', outputDir: '/tmp/x' } }] }),
      { text: 'Copied.' },
    );
    const r = await chat(t, { message: 'copy it', permissionMode: 'full-access', files: [{ name: 'book', nativePath: book }] });
    expect(r.frames.at(-1)?.event).toBe('done');
    expect(JSON.stringify(llm.requests[start]?.messages[0])).toContain('book: file, read');
    expect(seen.at(-1)).toMatchObject({ tool: 'copy_book', filePath: realpathSync(book), outputDir: '/tmp/x' });
  });

  it('refuses bad attachments before streaming', async () => {
    const r = await chat(t, { message: 'x', files: [{ name: 'nope', nativePath: join(dir, 'missing.xlsx') }] });
    expect(r.status).toBe(400);
    expect(r.frames).toEqual([]);
  });
});
