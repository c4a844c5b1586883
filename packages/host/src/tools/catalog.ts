import { type CatalogEntry, type Locale, MESSAGES, type ToolSourceKind } from '@fengyu/protocol';
import type { SourceStatus, Tool, ToolSource } from './tool';
import { toCatalogEntry } from './tool';

/** An immutable view of every tool at one moment: what a run validates and executes against. */
export class CatalogSnapshot {
  private readonly byName: ReadonlyMap<string, Tool>;
  /** Every tool, one per name, in source order. */
  readonly tools: readonly Tool[];
  /** The tools whose availability chose between two tools of one name, each with what it was then. */
  readonly availabilityRead: ReadonlyArray<readonly [Tool, boolean]>;

  constructor(all: readonly Tool[]) {
    // One tool per name: the first source wins, except that an available tool displaces an
    // unavailable one (a disabled plugin's tool never hides an enabled plugin's tool).
    const map = new Map<string, Tool>();
    const read: Array<readonly [Tool, boolean]> = [];
    for (const t of all) {
      const held = map.get(t.name);
      if (!held) {
        map.set(t.name, t);
        continue;
      }
      const heldAvailable = held.available;
      read.push([held, heldAvailable]);
      if (heldAvailable) continue;
      const available = t.available;
      read.push([t, available]);
      if (available) map.set(t.name, t);
    }
    this.byName = map;
    this.tools = all.filter((t) => map.get(t.name) === t);
    this.availabilityRead = read;
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  /** The catalog as the contract shows it; in `locale`, a tool's description in that language where it has one. */
  entries(locale?: Locale): CatalogEntry[] {
    const all = [...this.byName.values()];
    if (!locale || locale === 'en') return all.map(toCatalogEntry);
    return all.map((t) => {
      // a plugin's manifest translates its tools; the host's own tools are in the one table
      const said = t.descriptions?.[locale] ?? (t.source === 'builtin' ? MESSAGES[locale][`tool_desc_${t.name}`] : undefined);
      return said ? { ...toCatalogEntry(t), description: said } : toCatalogEntry(t);
    });
  }

  /** A snapshot without some tools (e.g. no workflow tools inside a workflow). */
  without(predicate: (t: Tool) => boolean): CatalogSnapshot {
    return new CatalogSnapshot(this.tools.filter((t) => !predicate(t)));
  }
}

/** Aggregates every registered source into snapshots. Sources register at host assembly. */
export class ToolCatalog {
  private readonly sources: ToolSource[] = [];
  /**
   * The last snapshot of every source and the tools it was made from. A snapshot is a function of
   * that list (and of the availability it read): while the sources list the very same tools, in
   * the same order, each as available as then, the snapshot made then is the one a new build
   * would make, and is handed out again (it is immutable).
   */
  private last?: { from: Tool[]; snapshot: CatalogSnapshot };
  /** The sources' answers the last snapshot was made from, when every source answered at once. */
  private lastLists?: ReadonlyArray<readonly Tool[]>;

  register(source: ToolSource): void {
    this.sources.push(source);
  }

  /** Every registered source's tools for `owner`; sources of the kind `skip` are not asked. */
  async snapshot(owner: string, skip?: ToolSourceKind): Promise<CatalogSnapshot> {
    const asked = skip === undefined ? this.sources : this.sources.filter((s) => s.kind !== skip);
    // the sources that answer at once are not awaited; a failing source contributes no tools
    let waits = false;
    const lists = asked.map((s) => {
      const now = listedNow(s, owner);
      if (now) return now;
      waits = true;
      return s.list(owner).catch(() => [] as Tool[]);
    });
    const answered = waits ? await Promise.all(lists) : (lists as Array<readonly Tool[]>);
    if (skip !== undefined) return new CatalogSnapshot(answered.flat());
    const last = this.last;
    // the very same answers as last time (a listNow array never changes): the same tools, not flattened again
    if (last && !waits && sameLists(this.lastLists, answered) && stillAvailable(last.snapshot)) return last.snapshot;
    this.lastLists = waits ? undefined : answered;
    const all = answered.flat();
    if (last && sameTools(last.from, all) && stillAvailable(last.snapshot)) return last.snapshot;
    const snapshot = new CatalogSnapshot(all);
    this.last = { from: all, snapshot };
    return snapshot;
  }

  async status(): Promise<SourceStatus[]> {
    const all = await Promise.all(this.sources.map((s) => (s.status ? s.status().catch(() => []) : Promise.resolve([]))));
    return all.flat();
  }
}

/** A source's `listNow`; a source that throws there lists no tools, as when its `list` fails. */
function listedNow(source: ToolSource, owner: string): readonly Tool[] | undefined {
  try {
    return source.listNow?.(owner);
  } catch {
    return [];
  }
}

/** Each tool whose availability chose between two of one name is as available as then. */
function stillAvailable(snapshot: CatalogSnapshot): boolean {
  return snapshot.availabilityRead.every(([t, was]) => t.available === was);
}

/** The same answer from each source: the same array, or two empty ones. */
function sameLists(a: ReadonlyArray<readonly Tool[]> | undefined, b: ReadonlyArray<readonly Tool[]>): boolean {
  if (a?.length !== b.length) return false;
  for (let i = 0; i < b.length; i++) {
    const x = a[i] as readonly Tool[];
    const y = b[i] as readonly Tool[];
    if (x !== y && (x.length !== 0 || y.length !== 0)) return false;
  }
  return true;
}

/** The same tool objects in the same order. */
function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
