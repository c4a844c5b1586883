import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { createHost, type Host, type HostOptions } from '../../src/http/server';
import { createTestTools, type TestTools } from './test-tools';

/** Starts a real host on port 0 with a temporary FENGYU_HOME, plus small HTTP/SSE clients. */

export interface TestHost {
  host: Host;
  home: string;
  tools: TestTools;
  api<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T; headers: Headers }>;
  /** Collects a run's SSE frames until the stream ends (a real EventSource client). */
  stream(runId: string, opts?: { until?: (e: SseEvent) => boolean; lastEventId?: number }): Promise<SseEvent[]>;
  /** Waits until an event of `type` arrives on the run's stream (replay included). */
  waitFor(runId: string, type: string): Promise<SseEvent>;
  /** POSTs `body` as the multipart field "file" named `name` (plugin installs, file uploads). */
  upload(path: string, body: Buffer, name: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface SseEvent {
  type: string;
  id: string;
  data: any;
}

const EVENT_TYPES = ['run_created', 'plan_token', 'plan_ready', 'plan_approval_requested', 'plan_approved', 'step_start', 'step_approval_requested', 'step_approved', 'input_requested', 'input_received', 'tool', 'step_retry', 'step_complete', 'loop_progress', 'audit', 'cancel_requested', 'resumed', 'status', 'complete', 'error', 'cancelled', 'interrupted'];
const END = new Set(['complete', 'error', 'cancelled', 'interrupted']);

export async function startTestHost(options: HostOptions & { keepHome?: string } = {}): Promise<TestHost> {
  const home = options.keepHome ?? mkdtempSync(join(tmpdir(), 'fengyu-test-'));
  const tools = createTestTools();
  const host = await createHost({
    home,
    port: 0,
    logLevel: 'silent',
    sandbox: 'off',
    bundledPluginDirs: [],
    writeHostFile: true,
    ...options,
    beforeDomains: async (ctx) => {
      ctx.catalog.register(tools.source);
      await options.beforeDomains?.(ctx);
    },
  });
  const api: TestHost['api'] = async (method, path, body, headers = {}) => {
    const res = await fetch(`${host.url}${path}`, {
      method,
      headers: { 'x-fengyu-token': host.token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {}
    return { status: res.status, body: parsed as any, headers: res.headers };
  };
  const upload: TestHost['upload'] = async (path, body, name) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(body)]), name);
    const res = await fetch(`${host.url}${path}`, { method: 'POST', headers: { 'x-fengyu-token': host.token }, body: form });
    return { status: res.status, body: (await res.json()) as any };
  };
  const stream: TestHost['stream'] = (runId, opts = {}) =>
    new Promise((resolve, reject) => {
      const url = `${host.url}/api/agent/stream?runId=${runId}&token=${encodeURIComponent(host.token)}${opts.lastEventId ? `&lastEventId=${opts.lastEventId}` : ''}`;
      const es = new EventSource(url);
      const got: SseEvent[] = [];
      const timer = setTimeout(() => {
        es.close();
        reject(new Error(`stream of ${runId} did not end; got ${got.map((g) => g.type).join(',')}`));
      }, 30_000);
      for (const t of EVENT_TYPES) {
        es.addEventListener(t, (m: MessageEvent) => {
          const e = { type: t, id: m.lastEventId, data: JSON.parse(m.data) };
          got.push(e);
          if (END.has(t) || opts.until?.(e)) {
            clearTimeout(timer);
            es.close();
            resolve(got);
          }
        });
      }
      es.onerror = () => {
        if (es.readyState === EventSource.CLOSED) {
          clearTimeout(timer);
          resolve(got);
        }
      };
    });
  const waitFor: TestHost['waitFor'] = async (runId, type) => {
    const events = await stream(runId, { until: (e) => e.type === type });
    const hit = events.find((e) => e.type === type);
    if (!hit) throw new Error(`no ${type} event; got ${events.map((e) => e.type).join(',')}`);
    return hit;
  };
  return {
    host,
    home,
    tools,
    api,
    stream,
    waitFor,
    upload,
    async close() {
      await host.close();
      if (!options.keepHome) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A supplied workflow run that needs no approvals. */
export const auto = { planApproval: false, permissionMode: 'full-access' } as const;
