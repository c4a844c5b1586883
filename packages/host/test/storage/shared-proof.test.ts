import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';

/**
 * The shared deployment, end to end: PostgreSQL and two real host processes (`fengyu serve`, one
 * database URL, two homes and ports). 200 background tasks are submitted across both, one host is
 * SIGKILLed mid-way, and then: every task ended `completed` or `interrupted`, exactly once (a task
 * once ended never changes; no body ran twice — each appends its number to a file), the tasks of
 * the killed host that were running come back `interrupted` (those whose run was never written run
 * once on the survivor instead), the queued ones run on the survivor,
 * the survivor's own live work was never touched, no schedule fire was duplicated, and an SSE
 * subscriber of the survivor received every event of the runs executing on it, in order, once.
 */

const root = join(import.meta.dirname, '../../../..');
const TOKEN = 'shared-proof-token-0123456789abcdef';
const TASKS = 200;
const LEASE_MS = 5000;

interface Served {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

function serve(home: string, databaseUrl: string): Promise<Served> {
  mkdirSync(home, { recursive: true });
  const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', home], {
    cwd: root,
    env: { ...process.env, FENGYU_DATABASE_URL: databaseUrl, FENGYU_TOKEN: TOKEN, FENGYU_HOST_LEASE_MS: String(LEASE_MS), FENGYU_LOG_LEVEL: 'warn', FENGYU_SANDBOX: 'off' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve printed: ${out}`)), 120_000);
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = out.match(/(http:\/\/127\.0\.0\.1:\d+)\/#token=/);
      if (m) {
        clearTimeout(timer);
        resolve({ child, base: m[1] as string, exited });
      }
    });
    child.on('exit', () => reject(new Error(`serve exited: ${out}`)));
  });
}

async function api(h: Served, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${h.base}${path}`, { method, headers: { 'x-fengyu-token': TOKEN, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
}

async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 240_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Streamed {
  events: Array<{ seq: number; type: string }>;
  done: Promise<void>;
}

/** Subscribes to a run's SSE stream on a host and collects every event until the run's end. */
function subscribe(h: Served, runId: string): Streamed {
  const events: Array<{ seq: number; type: string }> = [];
  const done = (async () => {
    const res = await fetch(`${h.base}/api/agent/stream?runId=${runId}&token=${encodeURIComponent(TOKEN)}`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done: eof } = await reader.read();
      if (eof) return;
      buf += dec.decode(value, { stream: true });
      let cut = buf.indexOf('\n\n');
      while (cut >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        cut = buf.indexOf('\n\n');
        const id = block.match(/^id: ?(\d+)$/m)?.[1];
        const type = block.match(/^event: ?(\S+)$/m)?.[1];
        if (!id || !type) continue;
        events.push({ seq: Number(id), type });
        if (['complete', 'error', 'cancelled', 'interrupted'].includes(type)) {
          await reader.cancel();
          return;
        }
      }
    }
  })();
  return { events, done };
}

describe.skipIf(!postgresAvailable())('a shared deployment survives the loss of one of its two hosts', () => {
  let server: TestPostgres;
  let url: string;
  let dir: string;
  let db: pg.Client;
  let watching = false;

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    dir = mkdtempSync(join(tmpdir(), 'fengyu-shared-proof-'));
  }, 120_000);
  afterAll(async () => {
    watching = false;
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await db?.end().catch(() => undefined);
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ends every task once, interrupts only the dead host’s running work, fires schedules once and loses no event', async () => {
    const side = join(dir, 'side');
    const a = await serve(join(dir, 'a'), url);
    db = new pg.Client({ connectionString: url });
    await db.connect();
    const hostA = (await db.query<{ id: string }>('select id from hosts')).rows[0]?.id as string;
    const b = await serve(join(dir, 'b'), url);
    const hostB = (await db.query<{ id: string }>('select id from hosts where id <> $1', [hostA])).rows[0]?.id as string;
    expect(hostB).toBeTruthy();

    // Each body appends its number to the shared file, then takes a little while.
    const made = await api(a, 'POST', '/api/workflows', {
      name: 'mark',
      inputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'string', maxLength: 12 } } },
      plan: { steps: [{ id: 'run', tool: 'execute_command', arguments: { command: `echo {{inputs.n}} >> ${side}; sleep 0.3` } }] },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const pub = await api(a, 'POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
    const workflowId = made.body.id as string;

    const watched = new Map<string, Streamed>();
    const scheduled = new Map<string, Set<string>>();
    // Every task's first terminal state, watched straight from the table (finished tasks are pruned
    // beyond the newest 100, so the watcher reads often); a later different state is a violation.
    const ids: string[] = [];
    const first = new Map<string, { state: string; host: string | null }>();
    const violations: string[] = [];
    watching = true;
    const poll = async () => {
        const { rows } = await db.query<{ id: string; state: string; host_id: string | null; run_id: string | null; schedule_id: string | null }>('select id, state, host_id, run_id, schedule_id from bg_tasks');
        for (const r of rows) {
          if (r.schedule_id) scheduled.set(r.schedule_id, (scheduled.get(r.schedule_id) ?? new Set()).add(r.id));
          if (r.state === 'running' && r.host_id === hostB && r.run_id && !watched.has(r.run_id) && watched.size < 12) watched.set(r.run_id, subscribe(b, r.run_id));
          if (r.state === 'queued' || r.state === 'running') continue;
          const seen = first.get(r.id);
          if (!seen) first.set(r.id, { state: r.state, host: r.host_id });
          else if (seen.state !== r.state) violations.push(`${r.id}: ${seen.state} then ${r.state}`);
        }
    };
    const watcher = (async () => {
      while (watching) {
        await poll().catch((err) => {
          if (watching) throw err;
        });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    // Schedules raced by both hosts' loops: each fires at once (and every minute), each occurrence once.
    const schedules: string[] = [];
    for (let i = 0; i < 4; i++) {
      const s = await api(i % 2 ? b : a, 'POST', '/api/agent/schedules', { workflowId, inputs: { n: `s${i}` }, permissionMode: 'full-access', runImmediately: true, recurrence: { kind: 'interval', everySeconds: 60 } });
      expect(s.status, JSON.stringify(s.body)).toBe(201);
      schedules.push(s.body.id as string);
    }

    // A long run executing on B, watched on B across the kill.
    const steps = Array.from({ length: 8 }, (_, i) => ({ id: `s${i}`, tool: 'execute_command', arguments: { command: 'sleep 0.5' }, ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}) }));
    const long = await api(b, 'POST', '/api/agent/run', { workflow: { steps }, config: { planApproval: false, permissionMode: 'full-access' } });
    expect(long.status, JSON.stringify(long.body)).toBe(200);
    watched.set(long.body.runId as string, subscribe(b, long.body.runId as string));

    const via = new Map<number, Served>();
    const submit = async (h: Served, n: number): Promise<void> => {
      via.set(n, h);
      for (;;) {
        const r = await api(h, 'POST', '/api/agent/tasks', { workflowId, inputs: { n: String(n) }, permissionMode: 'full-access' });
        if (r.status === 202) {
          ids[n] = r.body.id as string;
          return;
        }
        expect(r.status, JSON.stringify(r.body)).toBe(429);
        await new Promise((res) => setTimeout(res, 200));
      }
    };
    // First half across both hosts (four producers), until A runs something; then A is killed.
    let next = 0;
    const producer = async (h: Served, stopAt: number) => {
      while (next < stopAt) {
        const n = next;
        next += 1;
        await submit(h, n);
      }
    };
    await Promise.all([producer(a, 100), producer(b, 100), producer(a, 100), producer(b, 100)]);
    await until(async () => Number((await db.query('select count(*) as n from bg_tasks t where host_id = $1 and state = $2 and exists (select 1 from runs r where r.id = t.id)', [hostA, 'running'])).rows[0].n) > 0, 'host A to run tasks');
    a.child.kill('SIGKILL');
    await a.exited;
    // what A's death left: its running tasks, and those of them whose run was written (a task's run takes its id)
    const runningOnA = (await db.query<{ id: string; begun: boolean }>('select id, (run_id is not null or exists (select 1 from runs r where r.id = t.id)) as begun from bg_tasks t where host_id = $1 and state = $2', [hostA, 'running'])).rows;

    // The rest through the survivor.
    await Promise.all([producer(b, TASKS), producer(b, TASKS)]);
    expect(ids.filter(Boolean)).toHaveLength(TASKS);
    await until(() => ids.every((id) => first.has(id)), 'every task to end', 480_000);

    // every task ended completed or interrupted, once
    expect(violations).toEqual([]);
    const states = ids.map((id) => first.get(id)?.state);
    expect(states.filter((s) => s !== 'completed' && s !== 'interrupted')).toEqual([]);
    // only tasks A was running with their run written when it died were interrupted, and each of
    // them is; those whose run was never written were put back and ran once on the survivor
    const interrupted = ids.filter((id) => first.get(id)?.state === 'interrupted');
    expect(interrupted.every((id) => first.get(id)?.host === hostA)).toBe(true);
    const ours = runningOnA.filter((r) => ids.includes(r.id));
    expect(new Set(interrupted)).toEqual(new Set(ours.filter((r) => r.begun).map((r) => r.id)));
    expect(interrupted.length).toBeGreaterThan(0);
    for (const r of ours.filter((x) => !x.begun)) expect(first.get(r.id), r.id).toEqual({ state: 'completed', host: hostB });
    // a task submitted on one host may run on the other
    expect(ids.some((id, n) => via.get(n) === a && first.get(id)?.host === hostB)).toBe(true);
    expect(ids.some((id, n) => via.get(n) === b && first.get(id)?.host === hostA)).toBe(true);

    // no body ran twice; every completed task's body ran once
    const lines = readFileSync(side, 'utf8').split('\n').filter(Boolean);
    const count = new Map<string, number>();
    for (const l of lines) count.set(l, (count.get(l) ?? 0) + 1);
    const twice = [...count].filter(([k, c]) => !k.startsWith('s') && c > 1);
    expect(twice).toEqual([]);
    for (const [n, id] of ids.entries()) if (first.get(id)?.state === 'completed') expect(count.get(String(n)), `task ${n}`).toBe(1);

    // the dead host's lease was swept once; the survivor's live work was never interrupted
    const hostRows = (await db.query<{ id: string; swept_ms: number | null }>('select id, swept_ms from hosts')).rows;
    expect(hostRows.find((h) => h.id === hostA)?.swept_ms).not.toBeNull();
    expect(hostRows.find((h) => h.id === hostB)?.swept_ms).toBeNull();
    const longEnd = await until(async () => {
      const status = (await db.query<{ status: string }>('select status from runs where id = $1', [long.body.runId])).rows[0]?.status;
      return status && ['completed', 'failed', 'interrupted', 'cancelled'].includes(status) ? status : undefined;
    }, 'the long run on B to end');
    expect(longEnd).toBe('completed');

    // SSE: every event of the runs executing on B, in order, once
    expect(watched.size).toBeGreaterThan(1);
    for (const [runId, s] of watched) {
      await s.done;
      const log = (await db.query<{ seq: number; type: string }>('select seq, type from run_events where run_id = $1 order by seq', [runId])).rows.map((e) => ({ seq: Number(e.seq), type: e.type }));
      expect(s.events, runId).toEqual(log);
    }

    // schedules: once B stopped (no fire left in flight), as many tasks as recorded fires
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    watching = false;
    await watcher;
    await poll();
    for (const [i, id] of schedules.entries()) {
      const fires = Number((await db.query('select trigger_count from schedules where id = $1', [id])).rows[0].trigger_count);
      expect(fires).toBeGreaterThanOrEqual(1);
      expect(scheduled.get(id)?.size ?? 0).toBe(fires);
      expect(count.get(`s${i}`) ?? 0).toBeLessThanOrEqual(fires);
    }
    expect(existsSync(side)).toBe(true);
  }, 900_000);
});
