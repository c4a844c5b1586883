import { FengYuError, stableHash } from '@fengyu/protocol';
import { z } from 'zod';
import { htmlToText } from '../../net/html-text';
import type { SafeFetch } from '../../net/safe-fetch';
import type { Tool, ToolContext } from '../tool';

/**
 * `web_fetch` (effect read): fetches one http(s) URL through the one safe client and returns
 * readable text. The SSRF guard applies unless the owner's `webFetch.allowPrivateNetwork` is on.
 */

export const WebFetchSettings = z
  .object({
    /** Loopback, private, link-local and metadata addresses are refused unless this is true. */
    allowPrivateNetwork: z.boolean().default(false),
  })
  .strict();
export type WebFetchSettings = z.infer<typeof WebFetchSettings>;
export const WEB_FETCH_DEFAULTS: WebFetchSettings = { allowPrivateNetwork: false };

export const WEB_FETCH_DEFAULT_BYTES = 1024 * 1024;
export const WEB_FETCH_MAX_BYTES = 10 * 1024 * 1024;
const TIMEOUT_MS = 30_000;

const inputSchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', description: 'The http or https URL to fetch.', minLength: 1, maxLength: 8192 },
    maxBytes: {
      type: 'integer',
      minimum: 1,
      maximum: WEB_FETCH_MAX_BYTES,
      description: `Read at most this many bytes of the (decoded) body; default ${WEB_FETCH_DEFAULT_BYTES}.`,
    },
    format: {
      type: 'string',
      enum: ['text', 'markdown', 'html'],
      description: 'How HTML is returned: readable plain text (default), markdown, or the raw HTML.',
    },
  },
} as const;

const outputSchema = {
  type: 'object',
  required: ['url', 'finalUrl', 'status', 'contentType', 'title', 'text', 'truncated'],
  properties: {
    url: { type: 'string' },
    finalUrl: { type: 'string', description: 'The URL after redirects.' },
    status: { type: 'integer' },
    contentType: { type: 'string' },
    title: { type: 'string' },
    text: { type: 'string' },
    truncated: { type: 'boolean', description: 'True when the body was longer than maxBytes.' },
  },
} as const;

export interface WebFetchResult {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  title: string;
  text: string;
  truncated: boolean;
}

export interface WebFetchDeps {
  fetch: SafeFetch;
  /** The owner's `webFetch` section. */
  settings: (owner: string) => Promise<WebFetchSettings>;
  /** The text of the owner's first deny rule that names `url`'s host, or undefined. */
  deniedHost?: (owner: string, url: string) => Promise<string | undefined>;
}

const Args = z.object({
  url: z.string().min(1).max(8192),
  maxBytes: z.number().int().min(1).max(WEB_FETCH_MAX_BYTES).optional(),
  format: z.enum(['text', 'markdown', 'html']).optional(),
});

function parseArgs(args: Record<string, unknown>): z.infer<typeof Args> {
  const parsed = Args.safeParse(args);
  if (!parsed.success) {
    const reason = parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
    throw new FengYuError('invalid_request', { reason: `web_fetch ${reason}` });
  }
  return parsed.data;
}

/** The charset from the Content-Type header, else a `<meta charset>` in the first bytes, else UTF-8. */
export function decodeBody(body: Buffer, contentType: string): string {
  const declared = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  const sniffed = declared ? undefined : /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 2048).toString('latin1'))?.[1];
  const label = declared ?? sniffed ?? 'utf-8';
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

const TEXTUAL = /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml)|[^;]*\+(json|xml))/i;

export function isHtml(contentType: string, body: Buffer): boolean {
  if (/^(text\/html|application\/xhtml\+xml)/i.test(contentType)) return true;
  if (contentType) return false;
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(body.subarray(0, 512).toString('latin1'));
}

export function createWebFetchTool(deps: WebFetchDeps): Tool {
  return {
    name: 'web_fetch',
    description:
      'Fetch a web page or text resource over http(s) and return its readable text (HTML is converted; scripts, styles and navigation are dropped). Private and loopback addresses are refused unless enabled in settings.',
    inputSchema,
    outputSchema,
    effect: 'read',
    source: 'builtin',
    id: 'builtin:web_fetch',
    schemaRevision: stableHash({ inputSchema, outputSchema }),
    idempotent: true,
    available: true,
    async invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<WebFetchResult> {
      const { url, maxBytes, format = 'text' } = parseArgs(args);
      const settings = await deps.settings(ctx.owner);
      const res = await deps.fetch({
        url,
        signal: ctx.signal,
        timeoutMs: TIMEOUT_MS,
        maxBytes: maxBytes ?? WEB_FETCH_DEFAULT_BYTES,
        allowPrivateNetwork: settings.allowPrivateNetwork,
        headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5' },
        // the guard judged the first URL; every redirect hop is judged by the deny rules again
        beforeRedirect: async (next, from) => {
          const rule = await deps.deniedHost?.(ctx.owner, next.href);
          if (rule) throw new FengYuError('web_fetch_redirect_denied', { from: from.href, url: next.href, rule });
        },
      });
      const base = { url, finalUrl: res.finalUrl, status: res.status, contentType: res.contentType, truncated: res.truncated };
      if (isHtml(res.contentType, res.body)) {
        const html = decodeBody(res.body, res.contentType);
        const converted = htmlToText(html, { format: format === 'markdown' ? 'markdown' : 'text', baseUrl: res.finalUrl });
        return { ...base, title: converted.title, text: format === 'html' ? html : converted.text };
      }
      const textual = TEXTUAL.test(res.contentType) || (!res.contentType && !res.body.subarray(0, 512).includes(0));
      return { ...base, title: '', text: textual ? decodeBody(res.body, res.contentType) : '' };
    },
  };
}
