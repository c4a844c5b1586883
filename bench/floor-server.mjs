// Floors for the host benchmark, each in its own process like the host:
//   node floor-server.mjs http             a bare Node HTTP server (cold-start floor)
//   node floor-server.mjs sqlite <sync>    a bare Fastify route committing one SQLite row (WAL, synchronous=<sync>)
//   node floor-server.mjs echo             a newline-delimited JSON echo over stdio (plugin-call floor)
// Prints "PORT <n>" once listening (http, sqlite).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [mode, sync = 'normal'] = process.argv.slice(2);
if (mode === 'echo') {
  let buf = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (c) => {
    buf += c;
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const m = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} })}\n`);
      nl = buf.indexOf('\n');
    }
  });
} else if (mode === 'http') {
  const server = createServer((_req, res) => res.end('{"ok":true}'));
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));
} else {
  const { default: Database } = await import('better-sqlite3');
  const { default: Fastify } = await import('fastify');
  const { randomUUID } = await import('node:crypto');
  const dir = mkdtempSync(join(tmpdir(), 'fengyu-floor-'));
  const db = new Database(join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec('create table hits (id text primary key, body text not null, at integer not null)');
  const insert = db.prepare('insert into hits (id, body, at) values (?, ?, ?)');
  const app = Fastify();
  app.post('/floor', async (req) => {
    const id = randomUUID();
    insert.run(id, JSON.stringify(req.body ?? null), Date.now());
    return { id };
  });
  app.get('/floor', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`PORT ${app.server.address().port}\n`);
  const stop = () => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
