import { FengYuError, MAX_SECRET_VALUE_CHARS, redactionList, SECRET_NAME_RE, type SecretValue, type SecretView } from '@fengyu/protocol';
import type { Clock } from '../clock';
import type { Db, DialectName } from '../storage/database';
import { newKey, open, type SecretsKey, seal } from './cipher';
import { dropNextKey, keyFile, type LoadedKeys, promoteNextKey, writeKeyFile } from './secrets-key';
import type { SecretRow, VaultRepository } from './vault.repository';

/**
 * The encrypted vault (docs/secrets.md): an owner's named secrets, and the internal values other domains
 * keep here (backend API keys, MCP header and env values). Values are sealed before they reach
 * the repository and opened only for dispatch, for a backend or MCP connection, and to redact.
 * Every value is held opened in memory, so dispatch and redaction read it synchronously; on a
 * shared PostgreSQL database an owner's named secrets are read again when a run of the owner
 * is prepared (`refresh`), so a value another host changed is seen by the next run, and the
 * followed internal values (backend keys, MCP values) are read again before their use when their
 * scope's counter moved (`follow`).
 */

/** Internal values every host uses directly (a model call, an MCP connection): their writes move a counter other hosts check. */
export const FOLLOWED_PREFIXES = ['backend:', 'mcp:'] as const;
export type FollowedPrefix = (typeof FOLLOWED_PREFIXES)[number];

/** The counter's scope of a followed prefix (`backend`, `mcp`). */
const scopeOf = (prefix: FollowedPrefix) => prefix.slice(0, -1);

/** What a run reads of its owner's secrets: names to validate, values to substitute and to redact. */
export interface SecretsView {
  readonly names: ReadonlySet<string>;
  value(name: string): string | undefined;
  /** Every value to hide in results and errors (named and internal), longest first. */
  readonly redactions: readonly SecretValue[];
}

/**
 * Values a holder keeps (a task's secret inputs), sealed but not yet written: the holder writes
 * them with its own row in its own transaction, so that both commit or neither does (a refused or
 * rolled-back holder leaves nothing in the vault), then tells the vault they are committed.
 */
export interface KeptSeal {
  /** Writes the sealed values in the holder's Kysely transaction. */
  writeIn(trx: Db): Promise<void>;
  /** SQLite: writes them synchronously in the transaction the holder holds open on the host's connection. */
  writeWithin(): void;
  /** After the holder's commit: the values are readable (`getInternal`) from now on. */
  committed(): void;
}

const EMPTY_VIEW: SecretsView = { names: new Set(), value: () => undefined, redactions: [] };

const iso = (ms: number) => new Date(ms).toISOString();

export class Vault {
  /** owner → internal name → value, opened at start and kept in step with every write here. */
  private readonly internal = new Map<string, Map<string, string>>();
  /** owner → name → value of the named secrets, opened. */
  private readonly named = new Map<string, Map<string, string>>();
  /** The view of each owner, made on first use after a change. */
  private readonly views = new Map<string, SecretsView>();
  /** owner + followed prefix → the counter its values in `internal` were read at (PostgreSQL). */
  private readonly seen = new Map<string, number>();
  /** owner + followed prefix → how many times `follow` read its values again here (`stamp`). */
  private readonly stamps = new Map<string, number>();

  private constructor(
    private readonly repo: VaultRepository,
    private readonly key: SecretsKey,
    private readonly clock: Clock,
    private readonly dialect: DialectName,
  ) {}

  /**
   * Opens the vault with the configured key, creating the key file on a first start. A database
   * holding sealed values with no key, or with another key, is a start-up error (nothing is
   * changed, nothing is lost); a rotation cut short after its commit is finished here.
   */
  static async open(repo: VaultRepository, keys: LoadedKeys, home: string, clock: Clock, dialect: DialectName = 'sqlite'): Promise<Vault> {
    const ids = await repo.keyIds();
    let key = keys.key;
    if (ids.length === 0) {
      if (keys.next) dropNextKey(home);
      if (!key) {
        if (keys.fromEnv) throw new FengYuError('secrets_key_missing', { where: keys.where });
        key = newKey();
        writeKeyFile(keyFile(home), key);
      }
    } else {
      if (!key && !keys.next) throw new FengYuError('secrets_key_missing', { where: keys.where });
      if (key && ids.every((id) => id === key?.id)) {
        if (keys.next) dropNextKey(home); // a rotation that never committed
      } else if (keys.next && ids.every((id) => id === keys.next?.id) && !keys.fromEnv) {
        promoteNextKey(home); // a rotation that committed: its key becomes the key
        key = keys.next;
      } else throw new FengYuError('secrets_key_wrong', { where: keys.where });
      const sample = await repo.sample(key.id);
      try {
        if (sample) open(key, sample.owner, sample.name, sample.value);
      } catch {
        throw new FengYuError('secrets_key_wrong', { where: keys.where });
      }
    }
    const vault = new Vault(repo, key, clock, dialect);
    for (const row of await repo.all()) vault.mapOf(row.kind, row.owner).set(row.name, vault.openRow(row));
    return vault;
  }

  private openRow(row: SecretRow): string {
    return open(this.key, row.owner, row.name, row.value);
  }

  private mapOf(kind: SecretRow['kind'], owner: string): Map<string, string> {
    const maps = kind === 'user' ? this.named : this.internal;
    let m = maps.get(owner);
    if (!m) {
      m = new Map();
      maps.set(owner, m);
    }
    this.views.delete(owner);
    return m;
  }

  private internalOf(owner: string): Map<string, string> {
    return this.mapOf('internal', owner);
  }

  /** The owner's secrets as a run reads them (synchronous: from memory). */
  view(owner: string): SecretsView {
    const hit = this.views.get(owner);
    if (hit) return hit;
    const named = this.named.get(owner);
    const internal = this.internal.get(owner);
    if (!named?.size && !internal?.size) return EMPTY_VIEW;
    const values = new Map(named ?? []);
    const all = [...values].map(([name, value]) => ({ name, value }));
    for (const [name, value] of internal ?? []) all.push({ name, value });
    const view: SecretsView = { names: new Set(values.keys()), value: (n) => values.get(n), redactions: redactionList(all) };
    this.views.set(owner, view);
    return view;
  }

  /**
   * Reads the owner's named secrets again, and the followed values that moved (a shared database:
   * another host may have changed them), so a run's substitution and redaction see the current ones.
   */
  async refresh(owner: string): Promise<void> {
    if (this.dialect !== 'postgres') return; // one host per SQLite file: memory is the truth
    const rows = await this.repo.ofOwner(owner, 'user');
    const m = this.mapOf('user', owner);
    m.clear();
    for (const r of rows) m.set(r.name, this.openRow(r));
    await this.follow(owner);
  }

  /**
   * On a shared database, reads the owner's values under the followed `prefixes` again when another
   * host wrote them since this host read them: one read of the owner's counters (primary key) when
   * nothing moved, then the rows of the scopes that did. True when some were read again. SQLite
   * (one host per file) reads nothing: memory is the truth.
   */
  async follow(owner: string, prefixes: readonly FollowedPrefix[] = FOLLOWED_PREFIXES): Promise<boolean> {
    if (this.dialect !== 'postgres') return false;
    // the counters first, then the rows: a write committed in between moves the counter again,
    // so it is read on the next check rather than missed
    const versions = await this.repo.versions(owner);
    const moved = prefixes.filter((p) => this.seen.get(`${owner}\u0000${p}`) !== (versions.get(scopeOf(p)) ?? 0));
    if (moved.length === 0) return false;
    const rows = await this.repo.internalUnder(owner, moved);
    const m = this.internalOf(owner);
    for (const k of [...m.keys()]) if (moved.some((p) => k.startsWith(p))) m.delete(k);
    for (const r of rows) m.set(r.name, this.openRow(r));
    for (const p of moved) {
      this.seen.set(`${owner}\u0000${p}`, versions.get(scopeOf(p)) ?? 0);
      this.stamps.set(`${owner}\u0000${p}`, this.stamp(owner, p) + 1);
    }
    return true;
  }

  /**
   * How many times this host read the owner's values under `prefix` again from the database: a user
   * that holds something built from them (an MCP connection) rebuilds it when the stamp moved,
   * whichever caller's `follow` read them. Always 0 on SQLite.
   */
  stamp(owner: string, prefix: FollowedPrefix): number {
    return this.stamps.get(`${owner}\u0000${prefix}`) ?? 0;
  }

  /** The followed scopes a write of these names touches (PostgreSQL only: SQLite keeps no counter). */
  private followedIn(names: readonly string[]): FollowedPrefix[] {
    if (this.dialect !== 'postgres') return [];
    return FOLLOWED_PREFIXES.filter((p) => names.some((n) => n.startsWith(p)));
  }

  /** After this host's own write: its next `follow` reads the scope again (other hosts may have written too). */
  private forget(owner: string, prefixes: readonly FollowedPrefix[]): void {
    for (const p of prefixes) this.seen.delete(`${owner}\u0000${p}`);
  }

  /**
   * Reads the owner's internal values under `prefixes` again (a shared database: another host may
   * have kept them, such as the secret inputs of a task it admitted that this host runs).
   */
  async refreshInternal(owner: string, prefixes: readonly string[]): Promise<void> {
    if (this.dialect !== 'postgres') return; // one host per SQLite file: memory is the truth
    const rows = await this.repo.internalUnder(owner, prefixes);
    const m = this.internalOf(owner);
    for (const k of [...m.keys()]) if (prefixes.some((p) => k.startsWith(p))) m.delete(k);
    for (const r of rows) m.set(r.name, this.openRow(r));
  }

  private row(owner: string, name: string, kind: SecretRow['kind'], value: string): SecretRow {
    const now = iso(this.clock.now());
    return { owner, name, kind, value: seal(this.key, owner, name, value), key_id: this.key.id, created_at: now, updated_at: now };
  }

  /** The owner's named secrets, by name; never a value. */
  async list(owner: string): Promise<SecretView[]> {
    return (await this.repo.ofOwner(owner, 'user')).map((r) => ({ name: r.name, createdAt: r.created_at, updatedAt: r.updated_at }));
  }

  /** Creates or replaces a named secret; a bad name or value is refused before anything is written. */
  async put(owner: string, name: string, value: unknown): Promise<void> {
    if (!SECRET_NAME_RE.test(name)) throw new FengYuError('secret_name_invalid', { name });
    if (typeof value !== 'string') throw new FengYuError('secret_value_invalid', { name, reason: 'the value must be a string' });
    if (value.length === 0) throw new FengYuError('secret_value_invalid', { name, reason: 'the value is empty' });
    if (value.length > MAX_SECRET_VALUE_CHARS) throw new FengYuError('secret_value_invalid', { name, reason: `the value has ${value.length} characters, more than ${MAX_SECRET_VALUE_CHARS}` });
    await this.repo.upsert(this.row(owner, name, 'user', value));
    this.mapOf('user', owner).set(name, value);
  }

  async remove(owner: string, name: string): Promise<boolean> {
    if (!SECRET_NAME_RE.test(name)) return false;
    const removed = await this.repo.remove(owner, name);
    this.mapOf('user', owner).delete(name);
    return removed;
  }

  /** One internal value (synchronous: from memory). */
  getInternal(owner: string, name: string): string | undefined {
    return this.internal.get(owner)?.get(name);
  }

  /** Adds or replaces some of the owner's internal values (full names), keeping the others. */
  async mergeInternal(owner: string, values: Record<string, string>): Promise<void> {
    const current = this.internalOf(owner);
    const followed = this.followedIn(Object.keys(values));
    await this.repo.transaction(async (trx) => {
      for (const [name, value] of Object.entries(values)) await this.repo.upsert(this.row(owner, name, 'internal', value), trx);
      await this.repo.bump(owner, followed.map(scopeOf), trx);
    });
    for (const [name, value] of Object.entries(values)) current.set(name, value);
    this.forget(owner, followed);
  }

  /** The owner's internal values (full names) sealed for a holder to write with its own row (`KeptSeal`). */
  sealKept(owner: string, values: Record<string, string>): KeptSeal {
    const rows = Object.entries(values).map(([name, value]) => this.row(owner, name, 'internal', value));
    return {
      writeIn: (trx) => this.repo.upsertIn(trx, rows),
      writeWithin: () => this.repo.upsertWithin(rows),
      committed: () => {
        const current = this.internalOf(owner);
        for (const [name, value] of Object.entries(values)) current.set(name, value);
      },
    };
  }

  /** Removes one internal value (full name); false when there was none. */
  async removeInternal(owner: string, name: string): Promise<boolean> {
    const followed = this.followedIn([name]);
    const removed = followed.length
      ? await this.repo.transaction(async (trx) => {
          const gone = await this.repo.remove(owner, name, trx);
          await this.repo.bump(owner, followed.map(scopeOf), trx);
          return gone;
        })
      : await this.repo.remove(owner, name);
    this.internalOf(owner).delete(name);
    this.forget(owner, followed);
    return removed;
  }

  /**
   * Removes every internal value of the owner under `prefix` (one holder's), from the database
   * whatever this host's memory holds (on a shared database another host may have kept them).
   */
  async dropInternal(owner: string, prefix: string): Promise<void> {
    await this.repo.removePrefix(owner, prefix);
    const current = this.internalOf(owner);
    for (const k of [...current.keys()]) if (k.startsWith(prefix)) current.delete(k);
  }

  /** Replaces the owner's internal values under `prefix` with exactly `values` (names without the prefix), in one transaction. */
  async replaceInternal(owner: string, prefix: string, values: Record<string, string>): Promise<void> {
    const followed = this.followedIn([prefix]);
    // compared with what the database holds now, not with what another host's write left behind here
    if (followed.length) await this.follow(owner, followed);
    const current = this.internalOf(owner);
    const wanted = Object.entries(values).map(([k, v]) => [`${prefix}${k}`, v] as const);
    const same = wanted.length === [...current.keys()].filter((k) => k.startsWith(prefix)).length && wanted.every(([k, v]) => current.get(k) === v);
    if (same) return;
    await this.repo.transaction(async (trx) => {
      await this.repo.removePrefix(owner, prefix, trx);
      for (const [name, value] of wanted) await this.repo.upsert(this.row(owner, name, 'internal', value), trx);
      await this.repo.bump(owner, followed.map(scopeOf), trx);
    });
    for (const k of [...current.keys()]) if (k.startsWith(prefix)) current.delete(k);
    for (const [name, value] of wanted) current.set(name, value);
    this.forget(owner, followed);
  }
}
