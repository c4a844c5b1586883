import { FengYuError } from '@fengyu/protocol';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { ResolvedAddress } from './address-policy';

/**
 * One HTTP request/response exchange (no redirect handling) whose connection goes to an address
 * the caller checked. Name resolution happens exactly once, inside the socket's `lookup`, and
 * the checked addresses are the ones the socket connects to: no rebinding window.
 */

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface HopRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  signal: AbortSignal;
  maxBytes: number;
  resolver: Resolver;
  /** Throws (e.g. `web_fetch_blocked`) when the resolved addresses are not acceptable. */
  checkAddresses: (host: string, addresses: ResolvedAddress[]) => void;
}

export interface HopResponse {
  status: number;
  headers: Record<string, string>;
  /** Present when the body was not read (redirects). */
  location?: string;
  body: Buffer;
  truncated: boolean;
  /** Each Set-Cookie header on its own (the flattened `headers` join them with ", "). */
  setCookie?: string[];
}

export function pinnedLookup(resolver: Resolver, check: HopRequest['checkAddresses']): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (all) => {
        try {
          check(hostname, all);
        } catch (e) {
          callback(e as NodeJS.ErrnoException, '', 0);
          return;
        }
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        const list = wanted.length > 0 ? wanted : all;
        if (options.all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, list);
        else callback(null, (list[0] as ResolvedAddress).address, (list[0] as ResolvedAddress).family);
      },
      (e: NodeJS.ErrnoException) => callback(e, '', 0),
    );
  };
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function decoded(res: IncomingMessage): Readable {
  const enc = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') return res.pipe(zlib.createGunzip());
  if (enc === 'deflate') return res.pipe(zlib.createInflate());
  if (enc === 'br') return res.pipe(zlib.createBrotliDecompress());
  return res;
}

/** Reads at most `maxBytes` of the decoded body; stops the transfer when the cap is reached. */
function readCapped(url: string, res: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const stream = decoded(res);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      resolve({ body: Buffer.concat(chunks, size), truncated });
    };
    const onAbort = () => {
      if (done) return;
      done = true;
      res.destroy();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        size = maxBytes;
        res.destroy();
        if (stream !== res) stream.destroy();
        finish(true);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    stream.on('end', () => finish(false));
    stream.on('error', (e) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      reject(new FengYuError('web_fetch_failed', { url, reason: `bad response body: ${e.message}` }, undefined, { cause: e }));
    });
  });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function sendHop(req: HopRequest): Promise<HopResponse> {
  const { url } = req;
  const client = url.protocol === 'https:' ? https : http;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise<HopResponse>((resolve, reject) => {
    const r = client.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers: req.headers,
        agent: false,
        lookup: pinnedLookup(req.resolver, req.checkAddresses),
        signal: req.signal,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const headers = flatHeaders(res);
        const setCookie = res.headers['set-cookie'];
        if (REDIRECTS.has(status) && headers.location) {
          res.resume();
          res.destroy();
          resolve({ status, headers, location: headers.location, body: Buffer.alloc(0), truncated: false, ...(setCookie ? { setCookie } : {}) });
          return;
        }
        readCapped(url.href, res, req.maxBytes, req.signal).then((b) => resolve({ status, headers, ...b, ...(setCookie ? { setCookie } : {}) }), reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}
