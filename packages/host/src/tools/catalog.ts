import type { CatalogEntry, ToolSourceKind } from '@fengyu/protocol';
import type { SourceStatus, Tool, ToolSource } from './tool';
import { toCatalogEntry } from './tool';

/** An immutable view of every tool at one moment: what a run validates and executes against. */
export class CatalogSnapshot {
  private readonly byName: ReadonlyMap<string, Tool>;
  /** Every tool, one per name, in source order. */
  readonly tools: readonly Tool[];

  constructor(all: readonly Tool[]) {
    // One tool per name: the first source wins, except that an available tool displaces an
    // unavailable one (a disabled plugin's tool never hides an enabled plugin's tool).
    const map = new Map<string, Tool>();
    for (const t of all) {
      const held = map.get(t.name);
      if (!held || (!held.available && t.available)) map.set(t.name, t);
    }
    this.byName = map;
    this.tools = all.filter((t) => map.get(t.name) === t);
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  entries(): CatalogEntry[] {
    return [...this.byName.values()].map(toCatalogEntry);
  }

  /** A snapshot without some tools (e.g. no workflow tools inside a workflow). */
  without(predicate: (t: Tool) => boolean): CatalogSnapshot {
    return new CatalogSnapshot(this.tools.filter((t) => !predicate(t)));
  }
}

/** Aggregates every registered source into snapshots. Sources register at host assembly. */
export class ToolCatalog {
  private readonly sources: ToolSource[] = [];

  register(source: ToolSource): void {
    this.sources.push(source);
  }

  /** Every registered source's tools for `owner`; sources of the kind `skip` are not asked. */
  async snapshot(owner: string, skip?: ToolSourceKind): Promise<CatalogSnapshot> {
    const asked = skip === undefined ? this.sources : this.sources.filter((s) => s.kind !== skip);
    const lists = await Promise.all(asked.map((s) => s.list(owner).catch(() => [] as Tool[])));
    return new CatalogSnapshot(lists.flat());
  }

  async status(): Promise<SourceStatus[]> {
    const all = await Promise.all(this.sources.map((s) => (s.status ? s.status().catch(() => []) : Promise.resolve([]))));
    return all.flat();
  }
}
