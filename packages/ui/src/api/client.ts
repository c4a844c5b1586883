/**
 * The HTTP client of the UI: every call carries `X-FengYu-Token` and `Accept-Language`; errors
 * become `ApiError` with the host's stable code and localized message. Connection trouble is
 * reported through `onStatus` so the shell can show the unreachable banner or ask for a token.
 */

export type ConnectionStatus = 'ok' | 'unreachable' | 'unauthorized';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface ClientOptions {
  baseUrl?: string;
  token: () => string | undefined;
  locale: () => string;
  onStatus?: (status: ConnectionStatus) => void;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  signal?: AbortSignal;
}

export interface ApiClient {
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  get<T>(path: string, options?: RequestOptions): Promise<T>;
  post<T>(path: string, body?: unknown, options?: RequestOptions): Promise<T>;
  put<T>(path: string, body?: unknown, options?: RequestOptions): Promise<T>;
  del<T>(path: string, options?: RequestOptions): Promise<T>;
  upload<T>(path: string, file: File, options?: RequestOptions): Promise<T>;
  /** A download's bytes (the token in the header, as for every call). */
  blob(path: string, options?: RequestOptions): Promise<Blob>;
  /** An SSE address (EventSource cannot set headers, so the token rides in the query). */
  streamUrl(path: string, query: Record<string, string>): string;
}

function withQuery(path: string, query?: RequestOptions['query']): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

async function toError(res: Response): Promise<ApiError> {
  let body: { error?: { code?: string; message?: string; details?: unknown } } | undefined;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  const e = body?.error;
  return new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? res.statusText ?? `HTTP ${res.status}`, e?.details);
}

export function createApiClient(opts: ClientOptions): ApiClient {
  const base = opts.baseUrl ?? '';
  const doFetch = opts.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const headers = (): Record<string, string> => {
    const h: Record<string, string> = { 'Accept-Language': opts.locale() };
    const token = opts.token();
    if (token) h['X-FengYu-Token'] = token;
    return h;
  };
  async function send<T>(method: string, path: string, init: RequestInit, options?: RequestOptions, asBlob = false): Promise<T> {
    let res: Response;
    try {
      res = await doFetch(`${base}${withQuery(path, options?.query)}`, { method, ...init, signal: options?.signal });
    } catch (cause) {
      if ((cause as Error)?.name === 'AbortError') throw cause;
      opts.onStatus?.('unreachable');
      throw new ApiError(0, 'host_unreachable', 'The FengYu host cannot be reached.', { cause: String(cause) });
    }
    if (res.status === 401) {
      opts.onStatus?.('unauthorized');
      throw await toError(res);
    }
    opts.onStatus?.('ok');
    if (!res.ok) throw await toError(res);
    if (asBlob) return (await res.blob()) as T;
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }
  const json = <T>(method: string) => (path: string, body?: unknown, options?: RequestOptions) =>
    send<T>(method, path, { headers: { ...headers(), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) }, options);
  return {
    request: <T>(method: string, path: string, options?: RequestOptions) => json<T>(method)(path, options?.body, options),
    get: <T>(path: string, options?: RequestOptions) => send<T>('GET', path, { headers: headers() }, options),
    post: <T>(path: string, body?: unknown, options?: RequestOptions) => json<T>('POST')(path, body, options),
    put: <T>(path: string, body?: unknown, options?: RequestOptions) => json<T>('PUT')(path, body, options),
    del: <T>(path: string, options?: RequestOptions) => send<T>('DELETE', path, { headers: headers() }, options),
    upload: <T>(path: string, file: File, options?: RequestOptions) => {
      const form = new FormData();
      form.append('file', file, file.name);
      return send<T>('POST', path, { headers: headers(), body: form }, options);
    },
    blob: (path: string, options?: RequestOptions) => send<Blob>('GET', path, { headers: headers() }, options, true),
    streamUrl: (path, query) => `${base}${withQuery(path, { ...query, token: opts.token() ?? '' })}`,
  };
}
