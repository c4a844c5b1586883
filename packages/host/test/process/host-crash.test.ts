import type { ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/plugins/sandbox';
import { alive, waitUntil } from '../support/processes';
import { BOOT_MS, serveBin } from '../support/serve-bin';

/**
 * Commands a run started die with the host: a real `fengyu serve` is SIGKILLed while a workflow's
 * `execute_command` step sleeps; the command (and its background child) must be gone at once and
 * the step's later side effect (a marker file) must never happen. After a restart the run is
 * `interrupted`, not running again.
 */

const base = mkdtempSync(join(tmpdir(), 'fengyu-host-crash-'));
const hosts: ChildProcess[] = [];
const bwrapHere = Boolean(detectSandbox('auto', process.env).bwrapPath);
// Sleep durations unique to this run (fixed width, so one never contains another): another copy of
// this file running at the same time (another checkout, CI beside a developer's run) has its own
// commands, which this run must neither wait for nor kill.
const RUN = String(randomInt(1e9)).padStart(9, '0');
const TAGS = [1, 2, 3].map((i) => `30.${RUN}${i}`);

/** Pids of live processes whose command line contains `tag` (a unique sleep duration). */
function pidsWith(tag: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(tag) && alive(Number(name))) out.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

afterAll(() => {
  for (const h of hosts) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
  for (const tag of TAGS) for (const pid of pidsWith(tag)) process.kill(pid, 'SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

async function api(h: { base: string }, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${h.base}${path}`, { method, headers: { 'x-fengyu-token': token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
}

function workflow(dir: string, tag: string) {
  const command = `sleep ${tag} & echo $! > ${dir}/child.pid; wait $!; touch ${dir}/marker`;
  return { goal: 'crash', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 'slow', tool: 'execute_command', arguments: { command } }] } };
}

describe('a SIGKILLed host takes its commands with it', () => {
  it('kills the primary owner\'s command and a sandboxed owner\'s command; the marker never appears; the run is interrupted after restart', async () => {
    const home = join(base, 'home');
    const first = await serveBin(home, hosts);
    const runs: Array<{ runId: string; token: string; dir: string; tag: string }> = [];
    const primaryDir = mkdtempSync(join(base, 'primary-'));
    const p = await api(first, first.token, 'POST', '/api/agent/run', workflow(primaryDir, TAGS[0] as string));
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    runs.push({ runId: p.body.runId, token: first.token, dir: primaryDir, tag: TAGS[0] as string });
    if (bwrapHere) {
      // Another owner's command runs in bubblewrap; its scratch directory is the only place it can write.
      const bob = (await api(first, first.token, 'POST', '/api/owners', { name: 'bob' })).body.token as string;
      const b = await api(first, bob, 'POST', '/api/agent/run', { ...workflow('.', TAGS[1] as string) });
      expect(b.status, JSON.stringify(b.body)).toBe(200);
      runs.push({ runId: b.body.runId, token: bob, dir: join(home, 'runs', b.body.runId, 'work'), tag: TAGS[1] as string });
    }
    for (const r of runs) expect(await waitUntil(() => pidsWith(r.tag).length > 0, 30_000), `command of ${r.runId} started`).toBe(true);
    const before = runs.flatMap((r) => pidsWith(r.tag));

    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    expect(await waitUntil(() => before.every((pid) => !alive(pid)), 10_000)).toBe(true);
    for (const r of runs) expect(pidsWith(r.tag)).toEqual([]);
    for (const r of runs) expect(existsSync(join(r.dir, 'marker'))).toBe(false);

    const second = await serveBin(home, hosts);
    for (const r of runs) {
      const detail = (await api(second, r.token, 'GET', `/api/agent/runs/${r.runId}`)).body;
      expect(detail.status).toBe('interrupted');
    }
    for (const r of runs) expect(existsSync(join(r.dir, 'marker'))).toBe(false);

    // A clean stop (SIGTERM) stops the commands of running runs as well.
    const cleanDir = mkdtempSync(join(base, 'clean-'));
    const tag = TAGS[2] as string;
    const c = await api(second, second.token, 'POST', '/api/agent/run', workflow(cleanDir, tag));
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(await waitUntil(() => pidsWith(tag).length > 0, 30_000)).toBe(true);
    const running = pidsWith(tag);
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
    expect(await waitUntil(() => running.every((pid) => !alive(pid)), 10_000)).toBe(true);
    expect(existsSync(join(cleanDir, 'marker'))).toBe(false);
  }, 120_000 + 2 * BOOT_MS); // two boots, budgeted apart from the checks
});
