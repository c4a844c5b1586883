import { Counter, collectDefaultMetrics, Gauge, Histogram, type MetricObjectWithValues, type MetricValue, Registry } from 'prom-client';
import type { Logger } from 'pino';
import { TASK_PRIORITIES, type TaskCapacity } from '@fengyu/protocol';
import type { TaskMetricsSink } from './task-common';
import type { CapacityScope, TaskPriority } from './task-submitter';

/**
 * The scheduler's pressure as metrics (prom-client, one registry per host): dispatched and
 * rejected counters, the schedule-to-start histogram split by outcome, queue depth and oldest
 * wait gauges per class, plus the runtime's process metrics. Served as Prometheus text, and pushed
 * as OTLP/HTTP JSON when an OTLP metrics endpoint is configured.
 */

export const QUEUE_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

export class TaskMetrics implements TaskMetricsSink {
  readonly registry = new Registry();
  private readonly dispatchedTotal: Counter<'priority'>;
  private readonly rejectedTotal: Counter<'priority' | 'scope'>;
  private readonly wait: Histogram<'priority' | 'outcome'>;

  constructor(capacity: () => TaskCapacity) {
    const registers = [this.registry];
    this.dispatchedTotal = new Counter({ name: 'fengyu_bg_tasks_dispatched_total', help: 'Background tasks whose body started, by priority.', labelNames: ['priority'], registers });
    this.rejectedTotal = new Counter({ name: 'fengyu_bg_tasks_rejected_total', help: 'Background task submissions refused for capacity, by priority and limiting scope.', labelNames: ['priority', 'scope'], registers });
    this.wait = new Histogram({
      name: 'fengyu_bg_task_queue_wait_seconds',
      help: 'Schedule-to-start latency of background tasks, by priority and outcome (executed or cancelled while queued).',
      labelNames: ['priority', 'outcome'],
      buckets: QUEUE_WAIT_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'fengyu_bg_queue_inqueue',
      help: 'Background tasks waiting in the queue, by priority.',
      labelNames: ['priority'],
      registers,
      collect() {
        const c = capacity();
        for (const p of TASK_PRIORITIES) this.set({ priority: p }, c.byPriority[p].queued);
      },
    });
    new Gauge({
      name: 'fengyu_bg_queue_oldest_wait_ms',
      help: 'How long the oldest queued background task of each priority has waited, in milliseconds (0 when none is queued).',
      labelNames: ['priority'],
      registers,
      collect() {
        const c = capacity();
        this.set({ priority: 'interactive' }, c.oldestInteractiveQueueWaitMs);
        this.set({ priority: 'normal' }, c.oldestNormalQueueWaitMs);
        this.set({ priority: 'batch' }, c.oldestBatchQueueWaitMs);
      },
    });
    collectDefaultMetrics({ register: this.registry });
    // every labelled series exists from the start (a scraper sees zeros, not gaps)
    for (const p of TASK_PRIORITIES) {
      this.dispatchedTotal.inc({ priority: p }, 0);
      for (const o of ['executed', 'cancelled']) this.wait.zero({ priority: p, outcome: o });
    }
  }

  dispatched(priority: TaskPriority): void {
    this.dispatchedTotal.inc({ priority });
  }

  rejected(priority: TaskPriority, scope: CapacityScope): void {
    this.rejectedTotal.inc({ priority, scope });
  }

  queueWait(priority: TaskPriority, outcome: 'executed' | 'cancelled', seconds: number): void {
    this.wait.observe({ priority, outcome }, Math.max(0, seconds));
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

// --- OTLP/HTTP push (JSON encoding of ExportMetricsServiceRequest) ---

type Attr = { key: string; value: { stringValue: string } };
const attrs = (labels: Record<string, string | number> | undefined, skip?: string): Attr[] =>
  Object.entries(labels ?? {})
    .filter(([k]) => k !== skip)
    .map(([key, v]) => ({ key, value: { stringValue: String(v) } }));

const nanos = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;

/** Converts prom-client's metric objects to OTLP metrics (cumulative sums, gauges, explicit-bucket histograms). */
export function toOtlpMetrics(metrics: MetricObjectWithValues<MetricValue<string>>[], startMs: number, nowMs: number): unknown[] {
  const start = nanos(startMs);
  const time = nanos(nowMs);
  const out: unknown[] = [];
  for (const m of metrics) {
    const type = String(m.type);
    const point = (v: MetricValue<string>) => ({ attributes: attrs(v.labels as Record<string, string | number>), startTimeUnixNano: start, timeUnixNano: time, asDouble: v.value });
    if (type === 'counter') out.push({ name: m.name, description: m.help, sum: { dataPoints: m.values.map(point), aggregationTemporality: 2, isMonotonic: true } });
    else if (type === 'gauge') out.push({ name: m.name, description: m.help, gauge: { dataPoints: m.values.map((v) => ({ attributes: attrs(v.labels as Record<string, string | number>), timeUnixNano: time, asDouble: v.value })) } });
    else if (type === 'histogram') {
      const series = new Map<string, { labels: Record<string, string | number>; buckets: Array<[number, number]>; sum: number; count: number }>();
      for (const v of m.values as Array<MetricValue<string> & { metricName?: string }>) {
        const labels = { ...(v.labels as Record<string, string | number>) };
        const le = labels.le;
        delete labels.le;
        const key = JSON.stringify(Object.entries(labels).sort());
        const s = series.get(key) ?? { labels, buckets: [], sum: 0, count: 0 };
        series.set(key, s);
        if (v.metricName?.endsWith('_bucket')) s.buckets.push([le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), v.value]);
        else if (v.metricName?.endsWith('_sum')) s.sum = v.value;
        else if (v.metricName?.endsWith('_count')) s.count = v.value;
      }
      const dataPoints = [...series.values()].map((s) => {
        const sorted = s.buckets.sort((a, b) => a[0] - b[0]);
        const bounds = sorted.filter(([le]) => Number.isFinite(le)).map(([le]) => le);
        let prev = 0;
        const bucketCounts = sorted.map(([, cum]) => {
          const n = cum - prev;
          prev = cum;
          return String(n);
        });
        return { attributes: attrs(s.labels), startTimeUnixNano: start, timeUnixNano: time, count: String(s.count), sum: s.sum, bucketCounts, explicitBounds: bounds };
      });
      out.push({ name: m.name, description: m.help, histogram: { dataPoints, aggregationTemporality: 2 } });
    }
    // summaries (none of ours) are not exported
  }
  return out;
}

export interface OtlpPushOptions {
  /** The full metrics URL (a bare origin gets `/v1/metrics`). */
  endpoint: string;
  intervalMs: number;
  headers?: Record<string, string>;
  logger: Logger;
  now: () => number;
}

/** Parses `k=v,k2=v2` (the OTLP headers variable format). */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i > 0) out[decodeURIComponent(part.slice(0, i).trim())] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}

export function metricsUrl(endpoint: string): string {
  const u = new URL(endpoint);
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/v1/metrics';
  return u.toString();
}

/** Pushes the registry every `intervalMs` (and once more at stop). */
export class OtlpPusher {
  private timer?: NodeJS.Timeout;
  private readonly startMs: number;
  private readonly url: string;
  private inFlight?: Promise<void>;

  constructor(
    private readonly registry: Registry,
    private readonly opts: OtlpPushOptions,
  ) {
    this.startMs = opts.now();
    this.url = metricsUrl(opts.endpoint);
  }

  start(): void {
    this.timer = setInterval(() => void this.push(), this.opts.intervalMs);
    this.timer.unref();
  }

  async push(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.inFlight = (async () => {
      try {
        const metrics = toOtlpMetrics(await this.registry.getMetricsAsJSON(), this.startMs, this.opts.now());
        const body = {
          resourceMetrics: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'fengyu-host' } }] },
              scopeMetrics: [{ scope: { name: 'fengyu.tasks' }, metrics }],
            },
          ],
        };
        const res = await fetch(this.url, { method: 'POST', headers: { 'content-type': 'application/json', ...(this.opts.headers ?? {}) }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
        if (!res.ok) this.opts.logger.warn({ status: res.status, url: this.url }, 'OTLP metrics push refused');
        await res.body?.cancel();
      } catch (err) {
        this.opts.logger.warn({ err: (err as Error).message, url: this.url }, 'OTLP metrics push failed');
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.push();
  }
}
