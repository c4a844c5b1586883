import { connect } from 'node:net';

/**
 * A raw HTTP/1.1 client over a TCP socket: the request target and headers are sent byte for
 * byte as given (no URL normalization, unlike fetch), so the front door sees exactly what an
 * attacker would send.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

export interface RawRequest {
  method?: string;
  target: string;
  /** Header lines; `Host` is added unless given (pass `host: null` to send none). */
  headers?: Record<string, string | null>;
  body?: string;
  /** Sends the request line as HTTP/1.0 (allows omitting Host). */
  http10?: boolean;
  /** Header lines sent after `headers` as they are (e.g. a second `Host`). */
  extraLines?: string[];
}

export function rawRequest(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | null> = { host: `127.0.0.1:${port}`, connection: 'close', ...(req.headers ?? {}) };
    if (req.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
    const lines = [`${req.method ?? 'GET'} ${req.target} HTTP/${req.http10 ? '1.0' : '1.1'}`];
    for (const [k, v] of Object.entries(headers)) if (v !== null) lines.push(`${k}: ${v}`);
    lines.push(...(req.extraLines ?? []));
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const head = split === -1 ? raw : raw.slice(0, split);
      let text = split === -1 ? '' : raw.slice(split + 4);
      const [statusLine, ...headerLines] = head.split('\r\n');
      const status = Number((statusLine ?? '').split(' ')[1]);
      const h: Record<string, string> = {};
      for (const l of headerLines) {
        const i = l.indexOf(':');
        if (i > 0) h[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      if (h['transfer-encoding'] === 'chunked') text = dechunk(text);
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {}
      resolve({ status, headers: h, text, json });
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n${req.body ?? ''}`);
  });
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    if (nl === -1) break;
    const size = Number.parseInt(rest.slice(0, nl), 16);
    if (!size) break;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
  return out;
}
