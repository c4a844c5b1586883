import { type PermissionMode, isFengYuError, localize, redactSecrets, redactText, redactValue, type SecretValue } from '@fengyu/protocol';
import type { CallerKind, PermissionGuard, ToolCall } from '../permissions/types';
import type { FileGrant, Tool } from '../tools/tool';

/**
 * One model-initiated tool call through the permission guard: `tool` call event → guard check
 * (audited) → approval when the guard asks → invoke → `tool` result event → observe hooks.
 * Whatever happens, the model gets a value back: the tool's result, `{error: "denied: <reason>"}`
 * for a denial (so it can replan around it), or `{success: false, error}` for a failure.
 */

export interface CallEnv {
  owner: string;
  caller: CallerKind;
  permissionMode: PermissionMode;
  guard: PermissionGuard;
  grants: readonly FileGrant[];
  signal: AbortSignal;
  runId?: string;
  stepId?: string;
  /** The chat conversation, when the caller is chat. */
  conversationId?: string;
  emit: (type: 'tool' | 'audit', payload: Record<string, unknown>) => void;
  /** The owner's secret values: hidden (`[redacted:NAME]`) in what a tool answers before anyone sees it. */
  redactions?: readonly SecretValue[];
  /** Resolves true when the human approves (the run's step gate, or the chat confirmation card). */
  askApproval: (reason: string, detail: { tool: string; arguments: unknown; effect: string; callId: string }) => Promise<boolean>;
}

export async function callToolGuarded(env: CallEnv, tool: Tool, args: Record<string, unknown>, callId: string): Promise<unknown> {
  const base = { ...(env.stepId ? { stepId: env.stepId } : {}), name: tool.name, callId };
  env.emit('tool', { phase: 'call', ...base, arguments: redactSecrets(args, tool.inputSchema) });
  const call: ToolCall = {
    tool,
    arguments: args,
    owner: env.owner,
    permissionMode: env.permissionMode,
    caller: env.caller,
    ...(env.runId ? { runId: env.runId } : {}),
    ...(env.stepId ? { stepId: env.stepId } : {}),
  };
  const verdict = await permit(env, call, callId);
  const denial = verdict.denial;
  if (denial !== undefined) {
    const error = `denied: ${denial}`;
    env.emit('tool', { phase: 'result', ...base, error });
    return { error };
  }
  try {
    if (!tool.available) throw new Error(`tool "${tool.name}" is currently unavailable`);
    const answer = await tool.invoke(args, {
      signal: env.signal,
      owner: env.owner,
      permissionMode: env.permissionMode,
      approved: verdict.approved,
      grants: env.grants,
      ...(env.runId ? { runId: env.runId } : {}),
      ...(env.stepId ? { stepId: env.stepId } : {}),
      ...(env.conversationId ? { conversationId: env.conversationId } : {}),
      emit: env.emit,
      askApproval: (reason, detail) => env.askApproval(reason, { ...detail, callId }),
    });
    // the model, the events and the hooks see the answer with every secret value hidden
    const result = redactValue(answer, env.redactions ?? []);
    env.emit('tool', { phase: 'result', ...base, result });
    await observe(env, call, { ok: true, result });
    return result ?? null;
  } catch (err) {
    if (env.signal.aborted) throw err;
    const error = redactText(errorText(err), env.redactions ?? []);
    env.emit('tool', { phase: 'result', ...base, error });
    await observe(env, call, { ok: false, error });
    return { success: false, error };
  }
}

/** `denial` is undefined when the call may run; `approved` when a human (or the mode) approved it. */
async function permit(env: CallEnv, call: ToolCall, callId: string): Promise<{ denial?: string; approved: boolean }> {
  const decision = await env.guard.check(call, env.signal);
  for (const audit of decision.audits ?? []) env.emit('audit', { ...audit, ...(env.stepId ? { stepId: env.stepId } : {}) });
  env.emit('audit', {
    kind: 'permission',
    ...(env.stepId ? { stepId: env.stepId } : {}),
    tool: call.tool.name,
    decision: decision.decision,
    source: decision.source,
    ...(decision.rule ? { rule: decision.rule } : {}),
    reason: decision.reason,
    caller: env.caller,
  });
  if (decision.decision === 'allow') return { approved: env.permissionMode === 'full-access' };
  if (decision.decision === 'deny') return { denial: decision.reason, approved: false };
  const approved = await env.askApproval(decision.reason, { tool: call.tool.name, arguments: redactSecrets(call.arguments, call.tool.inputSchema), effect: call.tool.effect, callId });
  env.emit('audit', { kind: 'approval', ...(env.stepId ? { stepId: env.stepId } : {}), tool: call.tool.name, decision: approved ? 'approved' : 'rejected' });
  return approved ? { approved: true } : { denial: `${decision.reason} (not approved)`, approved: false };
}

async function observe(env: CallEnv, call: ToolCall, outcome: { ok: boolean; result?: unknown; error?: string }): Promise<void> {
  if (!env.guard.observe) return;
  try {
    for (const audit of await env.guard.observe(call, outcome)) env.emit('audit', audit);
  } catch {
    // observe hooks fail open; the guard logs its own failures
  }
}

export function errorText(err: unknown): string {
  if (isFengYuError(err)) {
    const e = err as { code: string; params: Record<string, unknown> };
    return localize(e.code, e.params, 'en');
  }
  return err instanceof Error ? err.message : String(err);
}
