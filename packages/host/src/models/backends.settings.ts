import { PROVIDERS, type Problem, type ProviderKind, REDACTED } from '@fengyu/protocol';
import { z } from 'zod';
import type { SectionSpec } from '../settings/settings.store';
import type { SecretStore } from './secret-store';

/**
 * Settings sections `backends` and `defaultBackend`. An `apiKey` never reaches the
 * settings document: `prepare` moves it into the vault (sealed, docs/secrets.md) and stores the one redaction marker
 * (`"[redacted]"`, the same as every other secret) instead. Reading shows the same marker, so a
 * GET → edit → PATCH round trip keeps the key: the marker keeps the stored key, a new string
 * replaces it, an absent `apiKey` removes it. The marker earlier versions used (`"••••"`) is
 * still read as "keep", so an older client's round trip never saves the marker as a key.
 */

export const KEY_MARKER = REDACTED;
const LEGACY_KEY_MARKER = '\u2022\u2022\u2022\u2022';

export { PROVIDERS, type ProviderKind };

const httpUrl = z
  .string()
  .max(2000)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

export const BackendSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    provider: z.enum(PROVIDERS),
    baseURL: httpUrl.optional(),
    model: z.string().min(1).max(200),
    apiKey: z.string().min(1).max(4000).optional(),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name')
      .optional(),
  })
  .strict();

export type BackendConfig = z.infer<typeof BackendSchema>;

export const BackendsSchema = z.array(BackendSchema).max(32);

export function validateBackends(list: BackendConfig[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  list.forEach((b, i) => {
    const field = `backends[${i}]`;
    if (seen.has(b.id)) problems.push({ code: 'invalid_settings', field: `${field}.id`, message: `backend id "${b.id}" is used more than once` });
    seen.add(b.id);
    if (b.apiKey !== undefined && b.apiKeyEnv !== undefined) {
      problems.push({ code: 'invalid_settings', field, message: 'give either apiKey or apiKeyEnv, not both' });
    }
    if (b.provider === 'openai-compatible' && !b.baseURL) {
      problems.push({ code: 'invalid_settings', field: `${field}.baseURL`, message: 'an openai-compatible backend needs a baseURL' });
    }
  });
  return problems;
}

/**
 * Who may name an environment variable: only the primary owner (the host's environment is
 * theirs), and nobody a `FENGYU_*` one (the host token, the database URL). Checked at save and
 * again at every use (`keyEnvProblem`), so a document saved before this rule cannot use it.
 */
export function keyEnvProblem(b: Pick<BackendConfig, 'id' | 'apiKeyEnv'>, owner: string, primaryOwner: string): Problem | undefined {
  if (b.apiKeyEnv === undefined) return undefined;
  const params = { backend: b.id, env: b.apiKeyEnv };
  if (/^FENGYU_/i.test(b.apiKeyEnv)) return { code: 'backend_key_env_reserved', field: `backends.${b.id}.apiKeyEnv`, params };
  if (owner !== primaryOwner) return { code: 'backend_key_env_forbidden', field: `backends.${b.id}.apiKeyEnv`, params };
  return undefined;
}

/** The address a backend's key is sent to: its provider and base URL. */
const addressOf = (b: Pick<BackendConfig, 'provider' | 'baseURL'>) => `${b.provider} ${b.baseURL ?? '(default URL)'}`;

/**
 * A stored key never follows a new address: the marker keeps the key only while the backend's
 * provider and `baseURL` stay as they were; with either changed the key must be given again
 * (`secret_reentry_required`), or `apiKey` left out to drop it.
 */
export function keyFollowProblems(list: BackendConfig[], prev: BackendConfig[] | undefined): Problem[] {
  return list.flatMap((b) => {
    if (b.apiKey !== KEY_MARKER && b.apiKey !== LEGACY_KEY_MARKER) return [];
    const old = prev?.find((p) => p.id === b.id && p.apiKey !== undefined);
    if (!old || addressOf(old) === addressOf(b)) return [];
    return [{ code: 'secret_reentry_required', field: `backends.${b.id}.apiKey`, params: { name: b.id, secret: 'apiKey', from: addressOf(old), to: addressOf(b) } }];
  });
}

/** Moves new keys into the vault; returns the list as stored (keys replaced by the marker). */
export async function prepareBackends(secrets: SecretStore, owner: string, next: BackendConfig[]): Promise<BackendConfig[]> {
  // a marker keeps the key the database holds now (another host may have rotated it), not an older copy
  await secrets.fresh(owner);
  const keys: Record<string, string> = {};
  const stored = next.map((b) => {
    if (b.apiKey === undefined) return b;
    const key = b.apiKey === KEY_MARKER || b.apiKey === LEGACY_KEY_MARKER ? secrets.get(owner, b.id) : b.apiKey;
    const { apiKey: _drop, ...rest } = b;
    if (key === undefined) return rest;
    keys[b.id] = key;
    return { ...rest, apiKey: KEY_MARKER };
  });
  await secrets.replace(owner, keys);
  return stored;
}

export function redactBackends(list: BackendConfig[]): BackendConfig[] {
  return list.map((b) => (b.apiKey === undefined ? b : { ...b, apiKey: KEY_MARKER }));
}

export function backendsSection(secrets: SecretStore, primaryOwner: string): SectionSpec<BackendConfig[]> {
  return {
    schema: BackendsSchema,
    defaultValue: [],
    validate: (list, _doc, ctx) => [
      ...validateBackends(list),
      ...list.flatMap((b) => keyEnvProblem(b, ctx.owner, primaryOwner) ?? []),
      ...keyFollowProblems(list, ctx.prev.backends as BackendConfig[] | undefined),
    ],
    redact: redactBackends,
    prepare: (next, _prev, owner) => prepareBackends(secrets, owner, next),
  };
}

export const DefaultBackendSchema = z.string().max(64).nullable();

/** The default backend must be one of the configured backends (or null for none). */
export const defaultBackendSection: SectionSpec<string | null> = {
  schema: DefaultBackendSchema,
  defaultValue: null,
  validate: (value, doc) => {
    if (value === null) return [];
    const configured = Array.isArray(doc.backends) ? (doc.backends as Array<{ id?: unknown }>) : [];
    if (configured.some((b) => b?.id === value)) return [];
    return [{ code: 'default_backend_unknown', field: 'defaultBackend', params: { backend: value } }];
  },
};
