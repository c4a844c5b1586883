import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small web site on loopback for the browser tools' tests and benchmark: links, a form that
 * posts and sets a cookie, a select, a table, a download, a late-appearing text, a popup, and
 * redirects / sub-resources pointing at private addresses.
 */

export interface Fixture {
  url: string;
  /** Paths requested so far (method + path). */
  requests: string[];
  close(): Promise<void>;
}

const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

const page = (title: string, body: string) => `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><link rel="stylesheet" href="/style.css"></head><body>${body}</body></html>`;

export const TABLE_ROWS = [
  ['Widget', '12.5', '40'],
  ['Gadget', '7', '0'],
  ['Doohickey', '130', '3'],
];

const HOME = page(
  'Fixture Home',
  `<h1>Fixture Home</h1>
<img src="/pixel.png" alt="pixel">
<p><a href="/second">Go to the second page</a> · <a href="/download">Get the report</a> · <a href="/second" target="_blank">Open in a new tab</a></p>
<form method="post" action="/submit">
  <label>Query <input name="q" type="text"></label>
  <label>Colour <select name="color"><option value="red">Red</option><option value="green">Green</option><option value="blue">Blue</option></select></label>
  <button type="submit">Send</button>
</form>
<table><caption>Stock</caption><thead><tr><th>Product</th><th>Price</th><th>Stock</th></tr></thead>
<tbody>${TABLE_ROWS.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody></table>`,
);

function parseForm(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body));
}

export async function startFixture(opts: { privateTarget?: string } = {}): Promise<Fixture> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://fixture');
    requests.push(`${req.method} ${u.pathname}`);
    const html = (status: number, text: string, headers: Record<string, string | string[]> = {}) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(text);
    };
    switch (u.pathname) {
      case '/':
        return html(200, HOME);
      case '/style.css':
        res.writeHead(200, { 'content-type': 'text/css' });
        return res.end('body { font-family: sans-serif; }');
      case '/pixel.png':
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(PIXEL);
      case '/second':
        return html(200, page('Second Page', '<h1>Second</h1><p>You arrived.</p><a href="/">Home</a>'));
      case '/submit': {
        let body = '';
        req.on('data', (c) => {
          body += c;
        });
        req.on('end', () => {
          const f = parseForm(body);
          html(200, page('Submitted', `<h1>Thanks</h1><p>Got q=${f.q ?? ''} color=${f.color ?? ''} via ${req.method}</p>`), { 'set-cookie': ['seen=1; Path=/', 'flavour=oat; Path=/; Max-Age=3600'] });
        });
        return;
      }
      case '/cookies':
        return html(200, page('Cookies', `<p>cookie:${req.headers.cookie ?? '(none)'}</p>`));
      case '/download':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="report.bin"' });
        return res.end(Buffer.alloc(1024, 7));
      case '/late':
        return html(200, page('Late', '<p id="status">Loading</p><script>setTimeout(() => { document.getElementById("status").textContent = "Ready now"; }, 150)</script>'));
      case '/redirect-private':
        res.writeHead(302, { location: opts.privateTarget ?? 'http://169.254.169.254/latest/meta-data/' });
        return res.end();
      case '/redirect-local':
        res.writeHead(302, { location: '/second' });
        return res.end();
      case '/subresources':
        return html(200, page('Mixed', `<h1>Mixed</h1><img src="http://169.254.169.254/latest/x.png"><img src="${opts.privateTarget ?? 'http://10.9.8.7/'}pic.png"><script>fetch("http://192.168.1.1/api").catch(() => {})</script>`));
      case '/redirect-to-localhost':
        // a redirect hop to this same server under the name "localhost"
        res.writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}/second` });
        return res.end();
      case '/img-localhost':
        return html(200, page('Pictures', `<h1>Pictures</h1><img src="http://localhost:${(server.address() as AddressInfo).port}/pixel.png">`));
      case '/to-localhost':
        // a link to this same server under the name "localhost"
        return html(200, page('Away', `<a id="away" href="http://localhost:${(server.address() as AddressInfo).port}/second">Away</a>`));
      default:
        return html(404, page('Not found', '<p>not here</p>'));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
