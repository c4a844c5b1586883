import { isFengYuError, localize } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { createSafeFetch, type SafeFetch } from '../net/safe-fetch';
import { mkdir } from 'node:fs/promises';
import { type CommandMode, commandMode, type OwnerIsolation, scratchDir, shellSpec } from '../process/owner-commands';
import { defaultProcessGroups, type ProcessGroups, runBounded } from '../process/spawn';
import type { HookConfig, HookEvent } from './hook-config';

/**
 * Runs one lifecycle hook: a command (through `sh -c`, started by the host's spawn helper: its
 * own process group, dies with the host, the event envelope as JSON on stdin) or an HTTP endpoint (the envelope as a POST body).
 *
 * pre_tool_use verdicts: exit 2 → deny with the first stderr line; stdout/body JSON
 * `{"decision":"deny","reason"}` → deny whatever the exit code (`"ask"` → ask); exit 0 or a JSON
 * allow → proceed. A crash, another exit code, a bad HTTP status, a timeout or an answer that is
 * not a verdict (output starting with `{` that is not JSON, or an unknown `decision`) is the
 * outcome `failed`/`timeout`: the guard lets the call proceed (fail open) unless the hook says
 * `failClosed: true`, and the failure is logged and returned as the outcome (an audit record).
 */

export interface HookTarget {
  /** Display name: the hook's name, or `plugin/<id>/<name>` for plugin hooks. */
  name: string;
  hook: HookConfig;
  cwd?: string;
  env?: Record<string, string>;
}

export type HookVerdictKind = 'proceed' | 'deny' | 'ask' | 'failed' | 'timeout';

export interface HookOutcome {
  kind: 'hook';
  hook: string;
  event: HookEvent;
  /** command | http (not `type`: audit records are spread into run events, whose `type` is theirs). */
  hookType: 'command' | 'http';
  outcome: HookVerdictKind;
  reason?: string;
  exitCode?: number | null;
  status?: number;
  durationMs: number;
}

export interface HookRunnerDeps {
  logger: Logger;
  clock: Clock;
  /** Environment for command hooks (the host's environment). */
  env: Readonly<Record<string, string | undefined>>;
  /** Working directory for user hooks (FENGYU_HOME). */
  cwd: string;
  /** The host's process registry (hooks of a run are killed with the run's processes). */
  groups?: ProcessGroups;
  /**
   * Isolation of owners: an owner's own command hooks (not plugin hooks, which run in their
   * plugin's folder) run like that owner's commands — sandboxed, or refused, for owners other
   * than the primary one.
   */
  isolation?: OwnerIsolation;
  /** The outbound HTTP client for http hooks (default: the SSRF-guarded one). */
  safeFetch?: SafeFetch;
}

const OUTPUT_CAP = 64 * 1024;

export class HookRunner {
  private readonly safeFetch: SafeFetch;

  constructor(private readonly deps: HookRunnerDeps) {
    this.safeFetch = deps.safeFetch ?? createSafeFetch({ userAgent: 'FengYu/0.1 (hook)' });
  }

  async run(target: HookTarget, envelope: Record<string, unknown>, signal?: AbortSignal): Promise<HookOutcome> {
    const started = this.deps.clock.now();
    const base = { kind: 'hook' as const, hook: target.name, event: target.hook.event, hookType: target.hook.type };
    let result: Omit<HookOutcome, keyof typeof base | 'durationMs'>;
    try {
      result = target.hook.type === 'command' ? await this.runCommand(target, envelope, signal) : await this.runHttp(target, envelope, signal);
    } catch (err) {
      result = { outcome: 'failed', reason: (err as Error).message };
    }
    const outcome: HookOutcome = { ...base, ...result, durationMs: Math.max(0, this.deps.clock.now() - started) };
    if (outcome.outcome === 'failed' || outcome.outcome === 'timeout') {
      this.deps.logger.warn({ hook: target.name, event: target.hook.event, outcome: outcome.outcome, reason: outcome.reason }, target.hook.failClosed ? 'hook failed; failing closed' : 'hook failed; failing open');
    }
    return outcome;
  }

  private async runCommand(target: HookTarget, envelope: Record<string, unknown>, signal?: AbortSignal): Promise<Omit<HookOutcome, 'kind' | 'hook' | 'event' | 'hookType' | 'durationMs'>> {
    const { hook } = target;
    const runId = typeof envelope.runId === 'string' ? envelope.runId : undefined;
    const owner = typeof envelope.owner === 'string' ? envelope.owner : undefined;
    const ownersOwnHook = target.cwd === undefined;
    const mode: CommandMode = ownersOwnHook && owner ? await commandMode(this.deps.isolation, owner) : 'host';
    const home = this.deps.cwd;
    const scratch = scratchDir(home, { runId, owner: owner ?? 'unknown' });
    if (mode !== 'host') await mkdir(scratch, { recursive: true });
    const spec = shellSpec({
      mode,
      isolation: this.deps.isolation,
      home,
      hostEnv: this.deps.env,
      shell: '/bin/sh',
      script: hook.command ?? 'false',
      cwd: mode === 'host' ? (target.cwd ?? home) : scratch,
      scratch,
      grants: [],
      runId,
      extraEnv: { ...target.env, FENGYU_HOOK_EVENT: hook.event, FENGYU_HOOK_NAME: target.name },
      stdin: 'pipe',
    });
    const r = await runBounded(
      this.deps.groups ?? defaultProcessGroups(),
      spec,
      { timeoutMs: hook.timeoutSeconds * 1000, outputCap: OUTPUT_CAP, signal, killGraceMs: 0, input: `${JSON.stringify(envelope)}\n` },
    );
    if (r.spawnError) return { outcome: 'failed', reason: `could not start: ${r.spawnError.message}` };
    if (r.timedOut) return { outcome: 'timeout', reason: `timed out after ${hook.timeoutSeconds} s`, exitCode: null };
    if (r.cancelled || signal?.aborted) return { outcome: 'failed', reason: 'cancelled', exitCode: null };
    const code = r.exitCode;
    const json = jsonVerdict(r.stdout);
    if (json && json.outcome !== 'proceed' && json.outcome !== 'failed') return { ...json, exitCode: code };
    if (code === 2) return { outcome: 'deny', reason: firstLine(r.stderr) ?? localize('approval_hook_denied_call', { name: target.name }), exitCode: 2 };
    if (json?.outcome === 'failed') return { ...json, exitCode: code };
    if (code === 0 || json) return { outcome: 'proceed', exitCode: code };
    return { outcome: 'failed', reason: r.signal ? `killed by ${r.signal}` : `exit code ${code}${firstLine(r.stderr) ? `: ${firstLine(r.stderr)}` : ''}`, exitCode: code };
  }

  private async runHttp(target: HookTarget, envelope: Record<string, unknown>, signal?: AbortSignal): Promise<Omit<HookOutcome, 'kind' | 'hook' | 'event' | 'hookType' | 'durationMs'>> {
    const { hook } = target;
    const timeout = AbortSignal.timeout(hook.timeoutSeconds * 1000);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      // The same SSRF address policy as web_fetch; redirects are not followed.
      const res = await this.safeFetch({
        url: hook.url as string,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-fengyu-hook': target.name, 'x-fengyu-hook-event': hook.event },
        body: JSON.stringify(envelope),
        signal: combined,
        timeoutMs: hook.timeoutSeconds * 1000,
        maxBytes: OUTPUT_CAP,
        maxRedirects: 0,
        allowPrivateNetwork: hook.allowPrivateNetwork === true,
        tool: `hook ${target.name}`,
      });
      const ok = res.status >= 200 && res.status < 300;
      const text = res.body.toString('utf8');
      const json = jsonVerdict(text);
      if (json) return { ...json, status: res.status };
      if (ok) return { outcome: 'proceed', status: res.status };
      return { outcome: 'failed', reason: `HTTP ${res.status}`, status: res.status };
    } catch (err) {
      if (timeout.aborted) return { outcome: 'timeout', reason: `timed out after ${hook.timeoutSeconds} s` };
      return { outcome: 'failed', reason: isFengYuError(err) ? errorText(err) : (err as Error).message };
    }
  }
}

/**
 * A JSON verdict on stdout or in the response body, if there is one. Output that starts with `{`
 * but is not JSON, or names a `decision` that is not one of the verdicts, is garbage: `failed`.
 * JSON without a `decision` is no verdict (the exit code or status decides).
 */
function jsonVerdict(text: string): { outcome: HookVerdictKind; reason?: string } | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return { outcome: 'failed', reason: `the hook's answer is not JSON: ${trimmed.slice(0, 200)}` };
  }
  const { decision, reason } = (parsed ?? {}) as { decision?: unknown; reason?: unknown };
  if (decision === undefined) return undefined;
  const why = typeof reason === 'string' && reason !== '' ? reason.slice(0, 2000) : undefined;
  if (decision === 'deny' || decision === 'block') return { outcome: 'deny', ...(why ? { reason: why } : { reason: localize('approval_hook_denies') }) };
  if (decision === 'ask') return { outcome: 'ask', ...(why ? { reason: why } : { reason: localize('approval_hook_asks') }) };
  if (decision === 'allow' || decision === 'approve') return { outcome: 'proceed', ...(why ? { reason: why } : {}) };
  return { outcome: 'failed', reason: `the hook's decision ${JSON.stringify(decision).slice(0, 100)} is not one of deny, block, ask, allow, approve` };
}

function errorText(err: unknown): string {
  const e = err as { code: string; params: Record<string, unknown> };
  return localize(e.code, e.params, 'en');
}

function firstLine(text: string): string | undefined {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '');
  return line ? line.trim().slice(0, 2000) : undefined;
}
