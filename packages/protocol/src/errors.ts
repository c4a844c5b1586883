/**
 * The one error table of FengYu: every stable error code, its HTTP status, its JSON-RPC code and
 * whether a caller may retry. Surfaces (HTTP error handler, RPC peer, SSE `error` frame) map
 * from this table once; throw sites never carry display text, only a code and parameters.
 *
 * Message text lives in the i18n tables (`i18n/*.ts`), keyed by the same code.
 */

export interface ErrorSpec {
  /** HTTP status used when this error ends a request. */
  status: number;
  /** JSON-RPC error code used when this error crosses a worker boundary. */
  rpc: number;
  /** True when repeating the same request later may succeed. */
  retryable: boolean;
}

const spec = (status: number, retryable = false, rpc = -32000): ErrorSpec => ({ status, rpc, retryable });

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
  sandbox_weakened: spec(409),
  invalid_keep_steps: spec(400),
  batch_size: spec(400),
  read_only_violation: spec(400),
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

export type CoreErrorCode = keyof typeof ERRORS;
/** Codes are open-ended: domains register their own codes in their i18n tables. */
export type ErrorCode = CoreErrorCode | (string & {});

const extra: Record<string, ErrorSpec> = {};

/** Domains (plugins, workflows, …) register their codes here at module load. */
export function registerErrors(table: Record<string, ErrorSpec>): void {
  Object.assign(extra, table);
}

export function errorSpec(code: string): ErrorSpec {
  return (ERRORS as Record<string, ErrorSpec>)[code] ?? extra[code] ?? ERRORS.internal;
}

export { spec as errorSpecOf };

/** A problem found by validation: where, what, and a stable code with parameters. */
export interface Problem {
  code: string;
  message?: string;
  stepId?: string;
  field?: string;
  params?: Record<string, unknown>;
}

/**
 * An error as a value: a stable code, message parameters and details. Display text is
 * produced by `localize()` at the surface, in the caller's language.
 */
export class FengYuError extends Error {
  readonly code: string;
  readonly params: Record<string, unknown>;
  readonly details?: unknown;

  constructor(code: string, params: Record<string, unknown> = {}, details?: unknown, options?: { cause?: unknown }) {
    super(code, options);
    this.name = 'FengYuError';
    this.code = code;
    this.params = params;
    this.details = details;
  }

  get status(): number {
    return errorSpec(this.code).status;
  }
}

export function isFengYuError(e: unknown): e is FengYuError {
  return e instanceof FengYuError || (typeof e === 'object' && e !== null && (e as { name?: string }).name === 'FengYuError');
}
