import { localize, type PermissionMode, type ToolEffect } from '@fengyu/protocol';
import type { GuardDecision, PermissionGuard, ToolCall } from './types';

/**
 * The permission mode's default, the last stage of the guard:
 * `ask` pauses write, external and command calls; `approve-for-me` and `full-access` allow
 * (plan steps marked `requiresApproval` are gated by the runner in every mode but full-access).
 */
export function modeDefault(mode: PermissionMode, effect: ToolEffect): GuardDecision {
  if (mode === 'ask' && effect !== 'read') {
    return { decision: 'ask', source: 'mode', reason: localize('approval_mode_ask', { effect }) };
  }
  return { decision: 'allow', source: 'mode', reason: localize('approval_mode_allows', { mode, effect }) };
}

/** A guard with no rules and no hooks: the mode default alone. */
export const modeOnlyGuard: PermissionGuard = {
  async check(call: ToolCall) {
    return modeDefault(call.permissionMode, call.tool.effect);
  },
};
