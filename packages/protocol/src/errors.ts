/**
 * The one error table of FengYu: every stable error code, its HTTP status, its JSON-RPC code and
 * whether a caller may retry. Surfaces (HTTP error handler, RPC peer, SSE `error` frame) map
 * from this table once; throw sites never carry display text, only a code and parameters.
 *
 * Message text lives in the i18n tables (`i18n/*.ts`), keyed by the same code.
 */

/** How one error code surfaces on each transport. */
export interface ErrorSpec {
  /** HTTP status used when this error ends a request (4xx for the caller's fault, 5xx for ours). */
  status: number;
  /**
   * JSON-RPC error code used when this error crosses a worker boundary: -32602 invalid params,
   * -32700 parse error, -32603 internal; -32000 (server error) for every other code.
   */
  rpc: number;
  /**
   * True when repeating the same request later may succeed (capacity, timeouts, upstream
   * failures); false when the request itself must change.
   */
  retryable: boolean;
}

const spec = (status: number, retryable = false, rpc = -32000): ErrorSpec => ({ status, rpc, retryable });

/**
 * The core error codes, each with its `ErrorSpec`. Codes are lower snake case; every code has a
 * message in each supported language, keyed by the code.
 */
export const ERRORS = {
  // transport and auth
  invalid_request: spec(400, false, -32602),
  invalid_json: spec(400, false, -32700),
  unauthorized: spec(401),
  forbidden: spec(403),
  forbidden_host: spec(403),
  forbidden_origin: spec(403),
  invalid_path: spec(400),
  duplicate_query_parameter: spec(400),
  duplicate_header: spec(400),
  json_too_deep: spec(400),
  forbidden_key: spec(400),
  owner_exists: spec(409),
  not_found: spec(404),
  route_not_found: spec(404),
  payload_too_large: spec(413),
  capacity_exhausted: spec(429, true),
  internal: spec(500, true, -32603),
  // runs
  invalid_plan: spec(400),
  no_chat_backend: spec(400),
  run_not_found: spec(404),
  no_pending_gate: spec(409),
  invalid_approval: spec(400),
  run_not_resumable: spec(409),
  run_not_finished: spec(409),
  invalid_run_status: spec(400),
  sandbox_weakened: spec(409),
  invalid_keep_steps: spec(400),
  batch_size: spec(400),
  read_only_violation: spec(400),
  // control flow: step errors raised while a run executes
  condition_model_invalid: spec(400),
  condition_pinned_invalid: spec(400),
  foreach_items_not_array: spec(400),
  foreach_too_many_items: spec(400),
  run_too_many_executions: spec(400),
  // tools
  tool_not_found: spec(404),
  tool_failed: spec(500, true),
  tool_timeout: spec(504, true),
  tool_cancelled: spec(499),
  permission_denied: spec(403),
  // settings
  invalid_settings: spec(400),
  // web tools
  web_fetch_blocked: spec(400),
  web_fetch_failed: spec(502, true),
  web_fetch_redirect_denied: spec(403),
  web_search_unconfigured: spec(400),
  web_search_failed: spec(502, true),
} as const satisfies Record<string, ErrorSpec>;

/** A code of the core table (`ERRORS`). */
export type CoreErrorCode = keyof typeof ERRORS;
/**
 * Codes are open-ended: domains register their own codes (`registerErrors`) and messages in
 * their i18n tables. Any string type-checks; an unregistered code surfaces as `internal`.
 */
export type ErrorCode = CoreErrorCode | (string & {});

const extra: Record<string, ErrorSpec> = {};

/**
 * Domains (plugins, workflows, …) register their codes here at module load. A later
 * registration of the same code replaces the earlier one; core codes always win on lookup.
 */
export function registerErrors(table: Record<string, ErrorSpec>): void {
  Object.assign(extra, table);
}

/**
 * The `ErrorSpec` of `code`: the core table first, then registered codes; an unknown code
 * surfaces as `internal` (500, retryable).
 */
export function errorSpec(code: string): ErrorSpec {
  return (ERRORS as Record<string, ErrorSpec>)[code] ?? extra[code] ?? ERRORS.internal;
}

/**
 * Builds an `ErrorSpec` for `registerErrors`: `errorSpecOf(status, retryable = false,
 * rpc = -32000)`.
 */
export { spec as errorSpecOf };

/** A problem found by validation: where, what, and a stable code with parameters. */
export interface Problem {
  /** A stable code with a message in every supported language (e.g. `step_unknown_tool`). */
  code: string;
  /** The rendered message, in the caller's language, when a surface has localized it. */
  message?: string;
  /** The plan step the problem belongs to, when it belongs to one. */
  stepId?: string;
  /**
   * Where the problem is: a dotted path with `[index]` parts (`arguments.path`,
   * `inputSchema.properties.x`); relative to the step when `stepId` is set.
   */
  field?: string;
  /** Values for the message's `{placeholder}`s; each placeholder of the message is filled. */
  params?: Record<string, unknown>;
}

/**
 * An error as a value: a stable code, message parameters and details. Display text is
 * produced by `localize()` at the surface, in the caller's language.
 */
export class FengYuError extends Error {
  /** The stable error code (a key of `ERRORS` or of a registered table). */
  readonly code: string;
  /** Values for the code's message placeholders; default none. */
  readonly params: Record<string, unknown>;
  /** Structured data for the caller (e.g. the list of `Problem`s). Optional. */
  readonly details?: unknown;

  /** `message` is the code itself; display text comes from the i18n tables. */
  constructor(code: string, params: Record<string, unknown> = {}, details?: unknown, options?: { cause?: unknown }) {
    super(code, options);
    this.name = 'FengYuError';
    this.code = code;
    this.params = params;
    this.details = details;
  }

  /** The HTTP status of the code (see `errorSpec`). */
  get status(): number {
    return errorSpec(this.code).status;
  }
}

/**
 * True for a `FengYuError`, including one from another copy of this package (recognised by
 * `name === 'FengYuError'`).
 */
export function isFengYuError(e: unknown): e is FengYuError {
  return e instanceof FengYuError || (typeof e === 'object' && e !== null && (e as { name?: string }).name === 'FengYuError');
}
