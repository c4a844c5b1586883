import { isFengYuError, TOOL_EFFECTS } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { type Tool, type ToolContext, type ToolSource, toCatalogEntry } from '../../src/tools/tool';

/**
 * The contract every ToolSource implementation keeps (STYLE: one shared suite per interface).
 * `sample` gives valid arguments for a tool of the source (the call is made with an aborted
 * signal, so it must not have effects).
 */
export interface ContractSubject {
  make: () => Promise<{ source: ToolSource; close?: () => Promise<void> }>;
  owner: string;
  sample: (tool: Tool) => Record<string, unknown> | undefined;
}

const ctx = (signal: AbortSignal, owner: string): ToolContext => ({ signal, owner, permissionMode: 'full-access', grants: [] });

export function toolSourceContract(name: string, subject: ContractSubject): void {
  describe(`ToolSource contract: ${name}`, () => {
    it('lists tools with unique names and ids, its own kind, object schemas and catalog entries', async () => {
      const { source, close } = await subject.make();
      try {
        const tools = await source.list(subject.owner);
        expect(tools.length).toBeGreaterThan(0);
        expect(new Set(tools.map((x) => x.name)).size).toBe(tools.length);
        expect(new Set(tools.map((x) => x.id)).size).toBe(tools.length);
        for (const t of tools) {
          expect(t.source).toBe(source.kind);
          expect(TOOL_EFFECTS).toContain(t.effect);
          expect(t.inputSchema.type).toBe('object');
          expect(t.schemaRevision).toMatch(/^[0-9a-f]{8}$/);
          const entry = toCatalogEntry(t);
          expect(Object.keys(entry)).toEqual(expect.arrayContaining(['name', 'description', 'inputSchema', 'effect', 'source', 'id', 'schemaRevision', 'idempotent', 'available']));
          expect(JSON.parse(JSON.stringify(entry))).toEqual(entry);
        }
      } finally {
        await close?.();
      }
    });

    it('keeps ids and schema revisions stable between snapshots', async () => {
      const { source, close } = await subject.make();
      try {
        const a = await source.list(subject.owner);
        const b = await source.list(subject.owner);
        expect(b.map((x) => [x.id, x.schemaRevision])).toEqual(a.map((x) => [x.id, x.schemaRevision]));
      } finally {
        await close?.();
      }
    });

    it('rejects (never resolves) a call whose signal is already aborted', async () => {
      const { source, close } = await subject.make();
      try {
        const tools = await source.list(subject.owner);
        let tried = 0;
        for (const t of tools) {
          const args = subject.sample(t);
          if (!args) continue;
          tried++;
          const ac = new AbortController();
          ac.abort();
          const outcome = await t.invoke(args, ctx(ac.signal, subject.owner)).then(
            () => 'resolved',
            (e) => (isFengYuError(e) ? e.code : 'raw'),
          );
          expect(outcome, t.name).toBe('tool_cancelled');
        }
        expect(tried).toBeGreaterThan(0);
      } finally {
        await close?.();
      }
    });

    it('reports status without throwing', async () => {
      const { source, close } = await subject.make();
      try {
        await source.list(subject.owner);
        const status = (await source.status?.()) ?? [];
        for (const s of status) expect(['ok', 'error', 'connecting', 'disabled']).toContain(s.state);
      } finally {
        await close?.();
      }
    });
  });
}
