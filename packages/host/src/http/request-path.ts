/**
 * The pure rules of the front door: the one path normalization that both the router and the
 * token check see, query-string and JSON-depth limits, and which Origin counts as our own.
 */

export type NormalizedPath = { ok: true; path: string; segments: string[] } | { ok: false };

/** Characters a decoded path segment may never contain: `/`, `\`, NUL and other controls. */
const FORBIDDEN_IN_SEGMENT = /[/\\\u0000-\u001f\u007f]/;
/** Characters a raw request target may never contain before its query. */
const FORBIDDEN_RAW = /[#\\\u0000-\u0020\u007f]/;
/**
 * A path that normalizes to itself: `/`-separated segments of characters that decoding and
 * `encodeURIComponent` leave as they are, each beginning with one that is not `.` (so no segment
 * is `.` or `..`), without a trailing `/`.
 */
const CANONICAL = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/;

/**
 * Normalizes the path part of a request target: percent-decodes each segment once, refuses a
 * decoded `/`, `\` or control character (NUL included) and malformed escapes, drops empty
 * segments (so `//` collapses), resolves `.` and `..` (never above the root), and re-encodes each
 * segment canonically (a trailing `/` is dropped). The result is what the router matches and what the token check reads.
 */
export function normalizePath(rawPath: string): NormalizedPath {
  // Already canonical (segments of unreserved characters, none empty, none `.` or `..`): itself.
  if (CANONICAL.test(rawPath)) return { ok: true, path: rawPath, segments: rawPath.slice(1).split('/') };
  if (!rawPath.startsWith('/') || FORBIDDEN_RAW.test(rawPath)) return { ok: false };
  const out: string[] = [];
  for (const raw of rawPath.split('/')) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return { ok: false };
    }
    if (FORBIDDEN_IN_SEGMENT.test(seg)) return { ok: false };
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      out.pop();
      continue;
    }
    out.push(seg);
  }
  return { ok: true, path: `/${out.map(encodeURIComponent).join('/')}`, segments: out };
}

/** The path part and the query part (without `?`) of a request target. */
export function splitTarget(target: string): { path: string; query: string } {
  const q = target.indexOf('?');
  return q === -1 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

/** The first query parameter name that occurs more than once, or undefined. */
export function duplicateQueryKey(query: string): string | undefined {
  if (!query) return undefined;
  const seen = new Set<string>();
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq === -1 ? part : part.slice(0, eq);
    let key: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
    } catch {
      key = rawKey;
    }
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return undefined;
}

/** The nesting depth of a JSON text (arrays and objects), scanned without parsing; stops early past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

const LOOPBACK_ORIGIN_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * True when an `Origin` header names this host itself: `http:` scheme, a loopback host name, and
 * exactly the port the request arrived on. `null`, other schemes, other ports and any other host
 * are foreign.
 */
export function isOwnOrigin(origin: string, port: number): boolean {
  const m = /^http:\/\/(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i.exec(origin.trim());
  if (!m) return false;
  const host = (m[1] as string).toLowerCase();
  const p = m[2] === undefined ? 80 : Number(m[2]);
  return LOOPBACK_ORIGIN_HOSTS.has(host) && p === port;
}

/** True when a normalized path is in the token-protected space: `/api`, `/api/**` or `/metrics`, in any letter case. */
export function isProtectedPath(segments: string[]): boolean {
  const first = segments[0]?.toLowerCase();
  return first === 'api' || first === 'metrics' || first === 'mcp';
}

/** True when the first segment is a protected name in the wrong letter case (`/API/…`, `/Metrics`). */
export function isMiscasedProtectedPath(segments: string[]): boolean {
  const first = segments[0];
  return first !== undefined && isProtectedPath(segments) && first !== first.toLowerCase();
}

/** Every value of header `name` (any letter case) as sent, in order: Node joins or drops repeats. */
export function rawHeaderValues(rawHeaders: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if ((rawHeaders[i] as string).toLowerCase() === name) out.push(rawHeaders[i + 1] as string);
  return out;
}

/**
 * Headers that decide who a request is and where it may come from; Node keeps the first `Host`
 * and `Authorization` and joins repeated others, so a repeat is refused (`duplicate_header`)
 * rather than read one way here and another way by a proxy in front.
 */
export const SINGLE_HEADERS: readonly string[] = ['host', 'origin', 'authorization', 'x-fengyu-token'];

/** The first of `SINGLE_HEADERS` sent more than once, else undefined. */
export function repeatedSingleHeader(rawHeaders: readonly string[]): string | undefined {
  return SINGLE_HEADERS.find((h) => rawHeaderValues(rawHeaders, h).length > 1);
}
