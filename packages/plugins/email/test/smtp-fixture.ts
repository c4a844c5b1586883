import net from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server on loopback (smtp-server), recording every accepted message, plus a TCP
 * proxy in front of it that can cut client connections when a given DATA command passes
 * (a server dropping the connection mid-batch).
 */

export interface Received {
  from: string;
  to: string[];
  raw: Buffer;
}

export interface SmtpFixture {
  port: number;
  messages: Received[];
  logins: string[];
  close(): Promise<void>;
}

export async function startSmtp(options: { users?: Record<string, string> } = {}): Promise<SmtpFixture> {
  const messages: Received[] = [];
  const logins: string[] = [];
  const users = options.users;
  const server = new SMTPServer({
    disabledCommands: users ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !users,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      logins.push(auth.username ?? '');
      if (users && users[auth.username ?? ''] === auth.password) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({ from: String(session.envelope.mailFrom ? session.envelope.mailFrom.address : ""), to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks) });
        cb(null, 'queued');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as net.AddressInfo).port;
  return { port, messages, logins, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface DropProxy {
  port: number;
  /** Cuts the connection that sends the n-th DATA command from now on (1-based, counted across connections); 0 passes everything. */
  dropAtData: number;
  close(): Promise<void>;
}

export async function startDropProxy(targetPort: number, dropAtData: number): Promise<DropProxy> {
  let seen = 0;
  const sockets = new Set<net.Socket>();
  const proxy: DropProxy = { port: 0, dropAtData, close: async () => {} };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => {
      if (/^DATA\r?$/m.test(chunk.toString('latin1'))) {
        seen++;
        if (proxy.dropAtData && seen === proxy.dropAtData) return kill();
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('error', kill).on('close', kill);
    upstream.on('error', kill).on('close', kill);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return proxy;
}

/** The attachments of a MIME message (base64 parts with a filename), decoded. Test-only parser. */
export function attachmentsOf(raw: Buffer): Array<{ filename: string; content: Buffer }> {
  const text = raw.toString('latin1');
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(text)?.[1];
  if (!boundary) return [];
  const out: Array<{ filename: string; content: Buffer }> = [];
  for (const part of text.split(`--${boundary}`)) {
    const split = part.search(/\r?\n\r?\n/);
    if (split < 0) continue;
    const head = part.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
    const filename = /filename\*?=(?:utf-8'')?"?([^";\r\n]+)"?/i.exec(head)?.[1];
    if (!filename || !/content-transfer-encoding:\s*base64/i.test(head)) continue;
    out.push({ filename: decodeURIComponent(filename), content: Buffer.from(part.slice(split).replace(/\s+/g, ''), 'base64') });
  }
  return out;
}

export function headerOf(raw: Buffer, name: string): string | undefined {
  const head = raw.toString('utf8').split(/\r?\n\r?\n/)[0]?.replace(/\r?\n[ \t]+/g, ' ') ?? '';
  return new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1];
}
