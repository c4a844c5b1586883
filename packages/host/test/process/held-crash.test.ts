import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packProbe } from '../plugins/helpers';
import { BOOT_MS, serveBin } from '../support/serve-bin';

/**
 * A real `fengyu serve` is SIGKILLed in the middle of a chain of plugin read steps whose
 * transitions are held across turns (killed as a burst of its stream arrives: the answers that
 * follow are then being held). After a restart: every event a subscriber saw is in the log, the log
 * is contiguous and in order, the run is interrupted, and every effect that happened (a command
 * step between the read steps) happened once, with its step's start in the log.
 */

const base = mkdtempSync(join(tmpdir(), 'fengyu-held-crash-'));
const hosts: ChildProcess[] = [];

afterAll(() => {
  for (const h of hosts) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

interface Frame {
  seq: number;
  type: string;
  data: { stepId?: string; phase?: string; [k: string]: unknown };
}

/** The complete frames of an SSE text (a trailing partial frame is left out). */
function frames(text: string): Frame[] {
  const out: Frame[] = [];
  for (const block of text.split('\n\n').slice(0, -1)) {
    const id = block.match(/^id: (\d+)$/m);
    const type = block.match(/^event: (\S+)$/m);
    const data = block.match(/^data: (.*)$/m);
    if (id && type && data) out.push({ seq: Number(id[1]), type: type[1] as string, data: JSON.parse(data[1] as string) });
  }
  return out;
}

const name = (f: Frame) => `${f.type}${f.type === 'tool' ? `.${f.data.phase}` : ''}${f.data.stepId ? `:${f.data.stepId}` : ''}`;

describe('a host killed while a plugin chain holds transitions', () => {
  it('loses no reported event, keeps the log in order, and makes no effect happen twice or without its start', async () => {
    const home = join(base, 'home');
    const effects = join(base, 'effects.txt');
    const first = await serveBin(home, hosts);
    const headers = { 'x-fengyu-token': first.token };
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(readFileSync(await packProbe()))]), 'probe.fyp');
    const installed = await fetch(`${first.base}/api/plugins`, { method: 'POST', headers, body: form });
    expect(installed.status, await installed.clone().text()).toBe(201);

    // read steps, and every 8th step a command that appends its step id to a file (an effect)
    const steps = Array.from({ length: 64 }, (_, i) => ({
      id: `s${i}`,
      ...(i % 8 === 4 ? { tool: 'execute_command', arguments: { command: `echo s${i} >> ${effects}` } } : { tool: 'probe_echo', arguments: { value: `s${i}` } }),
      ...(i ? { dependsOn: [`s${i - 1}`] } : {}),
    }));
    const posted = await fetch(`${first.base}/api/agent/run`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps } }),
    });
    expect(posted.status, await posted.clone().text()).toBe(200);
    const runId = ((await posted.json()) as { runId: string }).runId;

    // read the stream until 30 steps are seen complete, then kill the host as that burst arrives
    const stream = await fetch(`${first.base}/api/agent/stream?runId=${runId}`, { headers: { ...headers, accept: 'text/event-stream' } });
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (frames(text).filter((f) => f.type === 'step_complete').length >= 30) {
        first.child.kill('SIGKILL');
        break;
      }
    }
    await new Promise((r) => first.child.once('exit', r));
    await reader.cancel().catch(() => undefined);
    const seen = frames(text);
    expect(seen.filter((f) => f.type === 'step_complete').length).toBeGreaterThanOrEqual(30);
    expect(seen.some((f) => f.type === 'complete')).toBe(false);

    const second = await serveBin(home, hosts);
    const replay = await fetch(`${second.base}/api/agent/stream?runId=${runId}`, { headers: { 'x-fengyu-token': second.token, accept: 'text/event-stream' } });
    const log = frames(await replay.text());

    // every event reported before the kill was stored, as reported
    expect(log.slice(0, seen.length).map((f) => [f.seq, name(f)])).toEqual(seen.map((f) => [f.seq, name(f)]));
    // the log is contiguous, in order, and ends with the interruption
    expect(log.map((f) => f.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.at(-1)?.type).toBe('interrupted');
    const order = log.filter((f) => f.type === 'step_start' || f.type === 'step_complete').map(name);
    const started = order.filter((x) => x.startsWith('step_start:')).length;
    const expected = steps.slice(0, started).flatMap((s) => [`step_start:${s.id}`, `step_complete:${s.id}`]);
    // each step started after its dependency's end; the last started one may have no end
    expect(order).toEqual(order.length === expected.length ? expected : expected.slice(0, -1));
    for (const s of steps.slice(0, started)) {
      const mine = log.filter((f) => f.data.stepId === s.id && f.type !== 'audit' && f.type !== 'step_uncertain').map(name);
      const full = [`step_start:${s.id}`, `tool.call:${s.id}`, `tool.result:${s.id}`, `step_complete:${s.id}`];
      expect(full.slice(0, mine.length)).toEqual(mine);
    }

    // every effect happened once, and only after its step's start was stored
    const done = existsSync(effects) ? readFileSync(effects, 'utf8').trim().split('\n').filter(Boolean) : [];
    expect(done.length).toBeGreaterThan(0);
    expect(new Set(done).size).toBe(done.length);
    const startedIds = new Set(log.filter((f) => f.type === 'step_start').map((f) => f.data.stepId));
    for (const id of done) expect(startedIds.has(id), `${id} took effect without its start stored`).toBe(true);

    const detail = await fetch(`${second.base}/api/agent/runs/${runId}`, { headers: { 'x-fengyu-token': second.token } });
    expect(((await detail.json()) as { status: string }).status).toBe('interrupted');
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
  }, 120_000 + 2 * BOOT_MS); // two boots, budgeted apart from the checks
});
