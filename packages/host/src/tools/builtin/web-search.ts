import { FengYuError, isFengYuError, stableHash } from '@fengyu/protocol';
import { z } from 'zod';
import type { SafeFetch } from '../../net/safe-fetch';
import type { Tool, ToolContext } from '../tool';

/**
 * `web_search` (effect read): queries the owner's configured search endpoint (a SearXNG
 * instance, JSON API). The endpoint is the user's own configuration, so its origin is trusted
 * by the SSRF guard (it may be on loopback); redirects away from it are checked as usual.
 */

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http or https URL');

export const WebSearchSettings = z
  .object({
    provider: z.literal('searxng').default('searxng'),
    /** The SearXNG base URL (e.g. http://127.0.0.1:8888); `/search` is appended when missing. */
    url: httpUrl,
  })
  .strict()
  .nullable();
export type WebSearchSettings = z.infer<typeof WebSearchSettings>;

const MAX_RESULTS = 50;
const TIMEOUT_MS = 20_000;
const MAX_BYTES = 4 * 1024 * 1024;

const inputSchema = {
  type: 'object',
  required: ['query'],
  additionalProperties: false,
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 500, description: 'What to search for.' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_RESULTS, description: 'Most results to return (default 10).' },
    site: { type: 'string', maxLength: 253, description: 'Only results from this host (adds site:<host> to the query).' },
    language: { type: 'string', maxLength: 20, description: 'Result language, e.g. en or zh-CN.' },
  },
} as const;

const outputSchema = {
  type: 'object',
  required: ['query', 'results'],
  properties: {
    query: { type: 'string' },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['title', 'url', 'snippet'],
        properties: { title: { type: 'string' }, url: { type: 'string' }, snippet: { type: 'string' } },
      },
    },
  },
} as const;

export interface WebSearchResult {
  query: string;
  results: Array<{ title: string; url: string; snippet: string }>;
}

export interface WebSearchDeps {
  fetch: SafeFetch;
  settings: (owner: string) => Promise<WebSearchSettings>;
}

const Args = z.object({
  query: z.string().trim().min(1).max(500),
  limit: z.number().int().min(1).max(MAX_RESULTS).optional(),
  site: z
    .string()
    .max(253)
    .regex(/^[A-Za-z0-9.-]+$/, 'must be a host name')
    .optional(),
  language: z
    .string()
    .max(20)
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$|^all$/, 'must be a language tag')
    .optional(),
});

/** The SearXNG search URL for a configured base URL. */
export function searchUrl(base: string, q: string, language?: string): string {
  const u = new URL(base);
  if (!/\/search\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/+$/, '')}/search`;
  u.searchParams.set('q', q);
  u.searchParams.set('format', 'json');
  if (language) u.searchParams.set('language', language);
  return u.href;
}

/** Maps SearXNG's JSON (`results: [{title, url, content}]`) to our shape, dropping malformed rows. */
export function mapResults(json: unknown, limit: number): WebSearchResult['results'] {
  const rows = (json as { results?: unknown })?.results;
  if (!Array.isArray(rows)) throw new Error('the response has no "results" array');
  const out: WebSearchResult['results'] = [];
  for (const r of rows) {
    if (out.length >= limit) break;
    const row = r as { title?: unknown; url?: unknown; content?: unknown };
    if (typeof row?.url !== 'string' || !/^https?:\/\//i.test(row.url)) continue;
    out.push({
      title: typeof row.title === 'string' ? row.title : row.url,
      url: row.url,
      snippet: typeof row.content === 'string' ? row.content : '',
    });
  }
  return out;
}

export function createWebSearchTool(deps: WebSearchDeps): Tool {
  return {
    name: 'web_search',
    description: 'Search the web through the configured search endpoint (SearXNG) and return titles, URLs and snippets.',
    inputSchema,
    outputSchema,
    effect: 'read',
    source: 'builtin',
    id: 'builtin:web_search',
    schemaRevision: stableHash({ inputSchema, outputSchema }),
    idempotent: true,
    available: true,
    async invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<WebSearchResult> {
      const parsed = Args.safeParse(args);
      if (!parsed.success) {
        const reason = parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
        throw new FengYuError('invalid_request', { reason: `web_search ${reason}` });
      }
      const { query, limit = 10, site, language } = parsed.data;
      const config = await deps.settings(ctx.owner);
      if (!config?.url) throw new FengYuError('web_search_unconfigured');
      const q = site ? `site:${site} ${query}` : query;
      const url = searchUrl(config.url, q, language);
      let body: string;
      try {
        const res = await deps.fetch({
          url,
          signal: ctx.signal,
          timeoutMs: TIMEOUT_MS,
          maxBytes: MAX_BYTES,
          trustedOrigins: [new URL(config.url).origin],
          headers: { accept: 'application/json' },
          tool: 'web_search',
        });
        if (res.status !== 200) {
          const hint = res.status === 403 ? ' (is the json format enabled in SearXNG settings.yml "search.formats"?)' : '';
          throw new FengYuError('web_search_failed', { reason: `the endpoint answered HTTP ${res.status}${hint}` });
        }
        if (res.truncated) throw new FengYuError('web_search_failed', { reason: `the response is larger than ${MAX_BYTES} bytes` });
        body = res.body.toString('utf8');
      } catch (e) {
        if (isFengYuError(e) && (e.code === 'web_fetch_failed' || e.code === 'web_fetch_blocked')) {
          throw new FengYuError('web_search_failed', { reason: String(e.params.reason ?? e.code) }, undefined, { cause: e });
        }
        throw e;
      }
      try {
        return { query, results: mapResults(JSON.parse(body), limit) };
      } catch (e) {
        throw new FengYuError('web_search_failed', { reason: `not a SearXNG JSON answer: ${(e as Error).message}` }, undefined, { cause: e });
      }
    },
  };
}
