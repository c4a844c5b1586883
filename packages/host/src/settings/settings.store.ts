import { FengYuError, findForbiddenKey, PROTOTYPE_KEYS, type Problem } from '@fengyu/protocol';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Clock } from '../clock';
import type { Db } from '../storage/database';

/**
 * The owner's settings document. Domains register their sections; PATCH applies a
 * JSON merge patch (RFC 7386) to the whole document, validates every section, and only then
 * saves. Secrets never leave: sections redact on read and may move secrets out on save.
 */

export interface SectionSpec<T> {
  schema: z.ZodType<T>;
  defaultValue: T;
  /** The section as API responses show it (secrets removed). */
  redact?: (value: T) => unknown;
  /** Runs after validation, before saving (e.g. moves secrets to a 0600 file). */
  prepare?: (next: T, prev: T, owner: string) => T | Promise<T>;
  /**
   * Extra checks beyond the schema (e.g. rule syntax with line numbers). `doc` is the whole
   * document as it would be saved, for checks that span sections; `ctx` names the owner and
   * holds the document as stored before this change. Runs before any `prepare` (no side effect).
   */
  validate?: (value: T, doc: SettingsDoc, ctx: ValidateContext) => Problem[] | Promise<Problem[]>;
}

export interface ValidateContext {
  owner: string;
  /** The stored document before the patch (secrets as markers). */
  prev: SettingsDoc;
}

export type SettingsDoc = Record<string, unknown>;
type ChangeListener = (owner: string, doc: SettingsDoc, changed: string[]) => void | Promise<void>;

type Tables = {
  settings: { owner: string; doc: string; updated_at: string };
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete base[k];
    else base[k] = mergePatch(base[k], v);
  }
  return base;
}

export class SettingsStore {
  private readonly db: Kysely<Tables>;
  private readonly sections = new Map<string, SectionSpec<any>>();
  private readonly listeners: ChangeListener[] = [];
  private readonly cache = new Map<string, SettingsDoc>();

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.db = db.withTables<Tables>();
  }

  registerSection<T>(name: string, spec: SectionSpec<T>): void {
    if (this.sections.has(name)) throw new Error(`settings section ${name} registered twice`);
    this.sections.set(name, spec);
  }

  onChange(fn: ChangeListener): void {
    this.listeners.push(fn);
  }

  /** The full document with defaults for every section (unredacted: for the host's own use). */
  async get(owner: string): Promise<SettingsDoc> {
    const hit = this.cache.get(owner);
    if (hit) return hit;
    const row = await this.db.selectFrom('settings').select('doc').where('owner', '=', owner).executeTakeFirst();
    const stored = row ? (JSON.parse(row.doc) as SettingsDoc) : {};
    const doc: SettingsDoc = { ...stored };
    for (const [name, spec] of this.sections) {
      const parsed = spec.schema.safeParse(stored[name] ?? spec.defaultValue);
      doc[name] = parsed.success ? parsed.data : spec.defaultValue;
    }
    this.cache.set(owner, doc);
    return doc;
  }

  async section<T>(owner: string, name: string): Promise<T> {
    return (await this.get(owner))[name] as T;
  }

  /** The section `section` would answer, when the owner's document is already read; else undefined. */
  sectionNow<T>(owner: string, name: string): T | undefined {
    return this.cache.get(owner)?.[name] as T | undefined;
  }

  /** The document as the API shows it: every secret redacted. */
  async redacted(owner: string): Promise<SettingsDoc> {
    const doc = await this.get(owner);
    const out: SettingsDoc = {};
    for (const [name, value] of Object.entries(doc)) {
      const spec = this.sections.get(name);
      if (!spec) continue; // unknown keys are never echoed back
      out[name] = spec.redact ? spec.redact(value) : value;
    }
    return out;
  }

  /** Applies a merge patch; validates the whole result; saves; notifies. Throws invalid_settings. */
  async patch(owner: string, patch: unknown): Promise<SettingsDoc> {
    if (!patch || typeof patch !== 'object' || Array.isArray(patch)) {
      throw new FengYuError('invalid_settings', { count: 1 }, [{ code: 'invalid_settings', field: '(root)', message: 'a JSON object is required' }]);
    }
    // a patch is merged into stored objects: no key that reaches a prototype, at any depth
    const bad = findForbiddenKey(patch, PROTOTYPE_KEYS);
    if (bad) throw new FengYuError('forbidden_key', { key: bad.key, path: bad.path });
    const prev = await this.get(owner);
    const merged = mergePatch(prev, patch) as SettingsDoc;
    const problems: Problem[] = [];
    const next: SettingsDoc = {};
    for (const key of Object.keys(patch)) {
      if (!this.sections.has(key)) problems.push({ code: 'unknown_section', field: key, message: `unknown settings section "${key}"` });
    }
    for (const [name, spec] of this.sections) {
      const parsed = spec.schema.safeParse(merged[name] ?? spec.defaultValue);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const field = [name, ...issue.path.map(String)].join('.');
          problems.push({ code: 'invalid_settings', field, message: issue.message });
        }
        continue;
      }
      problems.push(...((await spec.validate?.(parsed.data, merged, { owner, prev })) ?? []));
      next[name] = parsed.data;
    }
    if (problems.length) throw new FengYuError('invalid_settings', { count: problems.length }, problems);
    const changed = [...this.sections.keys()].filter((n) => JSON.stringify(next[n]) !== JSON.stringify(prev[n]));
    for (const [name, spec] of this.sections) {
      if (spec.prepare) next[name] = await spec.prepare(next[name], prev[name], owner);
    }
    const now = new Date(this.clock.now()).toISOString();
    const docText = JSON.stringify(next);
    await this.db
      .insertInto('settings')
      .values({ owner, doc: docText, updated_at: now })
      .onConflict((oc) => oc.column('owner').doUpdateSet({ doc: docText, updated_at: now }))
      .execute();
    this.cache.set(owner, next);
    for (const l of this.listeners) await l(owner, next, changed);
    return next;
  }
}
