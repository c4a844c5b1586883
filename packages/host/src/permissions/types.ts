import type { PermissionMode } from '@fengyu/protocol';
import type { Tool } from '../tools/tool';
import type { HookConfig } from './hook-config';
import type { CallFacts, RuleLines } from './rules';

/**
 * The permission guard contract. Every tool call from any caller (runner step, model step,
 * chat, workflow tool) passes `check` before it runs and `observe` after it finishes.
 * Order inside `check`: PreToolUse hooks → deny rules → ask rules → allow rules → mode default.
 */

export type CallerKind = 'runner' | 'model' | 'chat' | 'workflow';

export interface ToolCall {
  tool: Tool;
  arguments: Record<string, unknown>;
  owner: string;
  permissionMode: PermissionMode;
  caller: CallerKind;
  runId?: string;
  stepId?: string;
}

export type DecisionSource = 'hook' | 'deny' | 'ask' | 'allow' | 'floor' | 'mode';

export interface GuardDecision {
  decision: 'allow' | 'ask' | 'deny';
  source: DecisionSource;
  rule?: string;
  reason: string;
  /** Records that explain the decision (hook runs, matched rules), appended as audit events. */
  audits?: Array<Record<string, unknown>>;
}

export interface ToolOutcome {
  ok: boolean;
  result?: unknown;
  error?: string;
}

export interface RunEnd {
  runId: string;
  owner: string;
  status: 'completed' | 'failed';
  goal?: string;
  summary?: string;
  error?: string;
}

/** Hooks one plugin contributes (its parsed `hooks/hooks.json`, see `parsePluginHooks`). */
export interface PluginHookSet {
  pluginId: string;
  /** The plugin's install directory: the hooks' working directory and FENGYU_PLUGIN_ROOT. */
  root: string;
  /** The plugin's data directory: FENGYU_PLUGIN_DATA. */
  dataDir: string;
  hooks: HookConfig[];
}

/**
 * Filled by the plugins domain: the hook sets of installed, enabled plugins. The guard runs a
 * set only while its plugin id is trusted (`POST /api/plugin-hooks/{id}/trust`), checked on
 * every call, so the provider may return every enabled plugin's hooks.
 */
export interface PluginHookProvider {
  trustedHooks(): Promise<PluginHookSet[]>;
  /** What `trustedHooks` would answer, when that needs no lookup (nothing changed since); else undefined. */
  trustedHooksNow?(): PluginHookSet[] | undefined;
}

export interface PermissionGuard {
  /** `signal`: an abort signal, or a stop whose `signal` is read only when a hook runs. */
  check(call: ToolCall, signal?: AbortSignal | { readonly signal: AbortSignal }): Promise<GuardDecision>;
  /** post_tool_use / post_tool_use_failure hooks; returns audit records. */
  observe?(call: ToolCall, outcome: ToolOutcome): Promise<Array<Record<string, unknown>>>;
  /** run_complete / run_error hooks; returns audit records. */
  runEnded?(end: RunEnd): Promise<Array<Record<string, unknown>>>;
  /** Connects plugin hooks (called by the plugins domain at assembly). */
  usePluginHooks?(provider: PluginHookProvider): void;
  /**
   * What `check` would decide, without running hooks (a dry run). Other domains use it to
   * ask "does an allow rule cover this step?" (e.g. schedules under the ask mode: source `allow`).
   */
  dryRun?(input: DryRunInput): Promise<GuardDecision>;
}

export interface DryRunInput {
  owner: string;
  /** The facts rules see: tool name, effect, source, origin and the call's arguments. */
  call: CallFacts;
  permissionMode: PermissionMode;
  /** Candidate rules instead of the owner's saved ones. */
  rules?: RuleLines;
}
