import { type CatalogEntry, ERROR_PORT, isRetrySafe, MAX_ATTEMPTS, OK_PORT, type OnError, PORT_HANDLE_PREFIX, type StepData, type StepNode, stepPorts, type WorkflowGraph } from '@fengyu/protocol';

/**
 * Failure handling on the canvas (docs/workflows.md, "Failure handling"): the node config
 * panel's On error / Timeout / Retry form and the node's `ok` / `error` ports. Pure: the form
 * reads and writes step data; `setOnError` rewires a node's edges in a graph.
 */

/** What the config panel edits; the timeout in seconds as typed (`''` = the tool's own). */
export interface FailureForm {
  onError: OnError;
  timeoutSeconds: string;
  attempts: number;
  /** Delay before the second attempt, in seconds (doubles for each further attempt). */
  delaySeconds: number;
}

/** The timeout the form offers, in seconds (the step's `timeoutMs` bounds, 1 s..1 h). */
export const TIMEOUT_SECONDS = { min: 1, max: 3600 } as const;
/** The longest first retry delay the form offers, in seconds (`retry.initialBackoffMs` ≤ 60000). */
export const MAX_DELAY_SECONDS = 60;
/** The first retry delay a new retry policy gets, in milliseconds. */
export const DEFAULT_BACKOFF_MS = 500;

/** The form of a node's step data. */
export function failureForm(data: Pick<StepData, 'onError' | 'timeoutMs' | 'retry'>): FailureForm {
  return {
    onError: data.onError ?? 'fail',
    timeoutSeconds: data.timeoutMs === undefined ? '' : String(data.timeoutMs / 1000),
    attempts: data.retry?.maxAttempts ?? 1,
    delaySeconds: (data.retry?.initialBackoffMs ?? DEFAULT_BACKOFF_MS) / 1000,
  };
}

/**
 * The step data a form stands for (every key present, undefined = left out): `fail` is the
 * default and not written; an empty timeout is none; a timeout is written in whole milliseconds
 * even when out of range, so the shared validator names the problem (`step_timeout_range`);
 * one attempt is no retry policy; attempts are clamped to 1..5 and the delay to 0..60 s.
 */
export function failurePatch(form: FailureForm): Pick<StepData, 'onError' | 'timeoutMs' | 'retry'> {
  const text = form.timeoutSeconds.trim();
  const seconds = text === '' ? undefined : Number(text);
  const timeoutMs = seconds === undefined || !Number.isFinite(seconds) ? undefined : Math.round(seconds * 1000);
  const attempts = Math.max(1, Math.min(MAX_ATTEMPTS, Math.trunc(Number(form.attempts) || 1)));
  const delay = Math.max(0, Math.min(MAX_DELAY_SECONDS, Number(form.delaySeconds) || 0));
  return {
    onError: form.onError === 'fail' ? undefined : form.onError,
    timeoutMs,
    retry: attempts > 1 ? { maxAttempts: attempts, initialBackoffMs: Math.round(delay * 1000) } : undefined,
  };
}

/** Why retry is not offered: a model step never retries, a pinned step is served, or the tool is not retry-safe / unknown. */
export type RetryBlock = { reason: 'model' } | { reason: 'pinned' } | { reason: 'unsafe'; tool: string; effect: string } | { reason: 'unknown'; tool: string };

/**
 * Whether the node may retry, the host validator's rule (`retry_unsafe`, `pinned_with_retry`):
 * a tool step whose tool is retry-safe (a read tool, or a plugin tool declared idempotent) and
 * that is not pinned. Undefined when it may; else why not.
 */
export function retryBlock(node: StepNode, entry: CatalogEntry | undefined): RetryBlock | undefined {
  if (node.type !== 'tool') return { reason: 'model' };
  if (node.data.pinned) return { reason: 'pinned' };
  if (!entry) return { reason: 'unknown', tool: node.tool.name };
  return isRetrySafe(entry) ? undefined : { reason: 'unsafe', tool: entry.name, effect: entry.effect };
}

/** Whether the config panel offers On error / Timeout / Retry for the node: tool and model steps. */
export function hasFailureSettings(node: StepNode): boolean {
  return node.type === 'tool' || node.type === 'model';
}

/** The output ports of a tool or model node: `ok` and `error` when it is set to branch, else none. */
export function failurePorts(node: StepNode): string[] {
  return hasFailureSettings(node) ? stepPorts({ tool: node.type === 'tool' ? node.tool.name : undefined, onError: node.data.onError }) : [];
}

const OK_HANDLE = `${PORT_HANDLE_PREFIX}${OK_PORT}`;
const ERROR_HANDLE = `${PORT_HANDLE_PREFIX}${ERROR_PORT}`;

/**
 * Sets a node's `onError` and keeps its edges meaningful: turning branch on moves its plain
 * outgoing connections onto the `ok` port (a plain dependency on a branch step already means
 * "when it succeeded"); turning it off moves `ok` connections back to plain and removes the
 * `error` port's connections (the port is gone, so they would name an unknown dependency).
 */
export function setOnError(graph: WorkflowGraph, nodeId: string, mode: OnError): void {
  const node = graph.nodes.find((n) => n.id === nodeId);
  if (!node || node.type === 'start' || node.type === 'forEach' || node.type === 'condition') return;
  const wasBranch = node.data.onError === 'branch';
  if (mode === 'fail') delete node.data.onError;
  else node.data.onError = mode;
  const isBranch = mode === 'branch';
  if (wasBranch === isBranch) return;
  const outgoing = (e: { source: string }) => e.source === nodeId;
  if (isBranch) {
    for (const e of graph.edges) if (outgoing(e) && (e.sourceHandle === undefined || e.sourceHandle === 'out')) e.sourceHandle = OK_HANDLE;
    return;
  }
  graph.edges = graph.edges.filter((e) => !(outgoing(e) && e.sourceHandle === ERROR_HANDLE));
  for (const e of graph.edges) if (outgoing(e) && e.sourceHandle === OK_HANDLE) delete e.sourceHandle;
}
