import { FengYuError } from '@fengyu/protocol';
import { z } from 'zod';
import type { Clock } from '../clock';
import type { SectionSpec } from '../settings/settings.store';
import { rankMemories } from './memory-ranking';
import type { MemoryPageQuery, MemoryRepository, MemorySource, StoredMemory } from './memory.repository';

/**
 * Cross-session memory (experimental, off by default): the settings section `memory`, the
 * operations behind the memory_* tools, and `relevant()` for the planning context.
 */

export const MemorySettingsSchema = z.object({ enabled: z.boolean() }).strict();
export type MemorySettings = z.infer<typeof MemorySettingsSchema>;

export const memorySection: SectionSpec<MemorySettings> = {
  schema: MemorySettingsSchema,
  defaultValue: { enabled: false },
};

export const MAX_MEMORIES = 1000;
export const MAX_MEMORY_CHARS = 2000;

export interface MemoryView {
  id: string;
  content: string;
  createdAt: string;
  score?: number;
}

export class MemoryService {
  constructor(
    private readonly repo: MemoryRepository,
    private readonly settings: { memory(owner: string): Promise<MemorySettings>; memoryNow?(owner: string): MemorySettings | undefined },
    private readonly clock: Clock,
  ) {}

  async enabled(owner: string): Promise<boolean> {
    return (await this.settings.memory(owner)).enabled;
  }

  /** The answer of `enabled` when the owner's settings are already read; else undefined. */
  enabledNow(owner: string): boolean | undefined {
    return this.settings.memoryNow?.(owner)?.enabled;
  }

  async remember(owner: string, content: string, source: MemorySource = {}): Promise<MemoryView> {
    const text = content.trim();
    if (!text) throw new FengYuError('invalid_request', { reason: 'content must not be empty' });
    if (text.length > MAX_MEMORY_CHARS) throw new FengYuError('invalid_request', { reason: `content is longer than ${MAX_MEMORY_CHARS} characters` });
    if ((await this.repo.count(owner)) >= MAX_MEMORIES) throw new FengYuError('memory_full', { max: MAX_MEMORIES });
    return view(await this.repo.add(owner, text, this.clock.now(), source));
  }

  async search(owner: string, query: string, limit = 5): Promise<MemoryView[]> {
    const all = await this.repo.list(owner, MAX_MEMORIES);
    return rankMemories(all, query, this.clock.now(), limit).map((r) => ({ ...view(r.memory), score: round(r.score) }));
  }

  async list(owner: string, limit = 20): Promise<MemoryView[]> {
    return (await this.repo.list(owner, limit)).map(view);
  }

  /**
   * The Memory screen's page (`GET /api/memory`): works whether or not memory is enabled, so a
   * person can review and delete what was stored before they turned it off.
   */
  async page(owner: string, query: MemoryPageQuery): Promise<{ items: MemoryEntry[]; nextCursor?: string }> {
    const page = await this.repo.page(owner, query);
    return { items: page.items.map(entry), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  async forget(owner: string, id: string): Promise<boolean> {
    return this.repo.remove(owner, id);
  }

  /** The memories to inject into a planning prompt; empty when memory is off for the owner. */
  async relevant(owner: string, text: string, limit = 5): Promise<string[]> {
    if (!(await this.enabled(owner))) return [];
    return (await this.search(owner, text, limit)).map((m) => m.content);
  }
}

/** A memory as the HTTP API shows it (`text`, `source`: the fields the memory settings name). */
export interface MemoryEntry {
  id: string;
  text: string;
  createdAt: string;
  source: MemorySource;
}

function entry(m: StoredMemory): MemoryEntry {
  return { id: m.id, text: m.content, createdAt: m.createdAtIso, source: m.source };
}

function view(m: StoredMemory): MemoryView {
  return { id: m.id, content: m.content, createdAt: m.createdAtIso };
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
