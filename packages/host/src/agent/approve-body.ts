import { FengYuError } from '@fengyu/protocol';

/**
 * The accepted bodies of a gate answer, and nothing else: empty or `{}` or
 * `{"decision":"approve"}` releases the gate as is; `{"decision":"reject","reason"?}` rejects it;
 * an AgentPlan (`{steps, goal?}`) replaces the plan (plan gate only, validated later). Any other
 * shape — an unknown decision, extra keys, an array, a scalar, `null` — is refused before the
 * gate is touched.
 */

export type ApproveDecision = { kind: 'approve' } | { kind: 'reject'; reason?: string } | { kind: 'plan'; plan: Record<string, unknown> };

export const MAX_REJECT_REASON = 2000;
const PLAN_KEYS = new Set(['steps', 'goal']);

function refuse(reason: string): never {
  throw new FengYuError('invalid_approval', { reason }, [{ code: 'invalid_approval', field: 'body', params: { reason } }]);
}

export function classifyApproveBody(body: unknown): ApproveDecision {
  if (body === undefined) return { kind: 'approve' };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) refuse(`expected an object, got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`);
  const obj = body as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length === 0) return { kind: 'approve' };
  if ('steps' in obj) {
    const extra = keys.filter((k) => !PLAN_KEYS.has(k));
    if (extra.length > 0) refuse(`an edited plan has only "steps" and "goal"; unexpected ${extra.map((k) => `"${k}"`).join(', ')}`);
    if (!Array.isArray(obj.steps)) refuse('"steps" must be an array');
    return { kind: 'plan', plan: obj };
  }
  const extra = keys.filter((k) => k !== 'decision' && k !== 'reason');
  if (extra.length > 0) refuse(`unexpected ${extra.map((k) => `"${k}"`).join(', ')}`);
  if (obj.decision === 'approve') {
    if ('reason' in obj) refuse('"reason" goes with "decision":"reject" only');
    return { kind: 'approve' };
  }
  if (obj.decision === 'reject') {
    if (obj.reason === undefined) return { kind: 'reject' };
    if (typeof obj.reason !== 'string' || obj.reason.length > MAX_REJECT_REASON) refuse(`"reason" must be a string of at most ${MAX_REJECT_REASON} characters`);
    return { kind: 'reject', reason: obj.reason };
  }
  return refuse(`"decision" must be "approve" or "reject", got ${JSON.stringify(obj.decision) ?? 'nothing'}`);
}
