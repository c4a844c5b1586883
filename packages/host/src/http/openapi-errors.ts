/**
 * The error answers of the OpenAPI document: which 4xx statuses each operation documents, all
 * carrying the shared error envelope (`components.schemas.Error`). 5xx answers stay under the
 * operation's `default` response.
 *
 * Rules (the route's shape decides; the tables below add what the shape cannot show):
 * - 400 when the operation takes a body, a query string or path parameters (they are validated);
 * - 401 on every operation (the host token, or a webhook's own secret);
 * - 404 when the path has a parameter (another owner's thing is a 404 too);
 * - 413 when the operation takes a body;
 * - 403, 409 and 429 only where `EXTRA` names the operation, with the codes that produce them.
 */

/** A response status the document describes, with its component name and description. */
const RESPONSES = {
  '400': { name: 'BadRequest', description: 'The request is invalid (a field, the body or a parameter); `error.details` lists each problem with its field.' },
  '401': { name: 'Unauthorized', description: 'The token (or the webhook secret) is missing or wrong.' },
  '403': { name: 'Forbidden', description: 'The caller may not do this.' },
  '404': { name: 'NotFound', description: 'No such thing for this owner (another owner’s thing is not found either).' },
  '409': { name: 'Conflict', description: 'The thing is not in a state that allows this (see `error.code`).' },
  '413': { name: 'PayloadTooLarge', description: 'The body is larger than this route accepts.' },
  '429': { name: 'TooManyRequests', description: 'Capacity is exhausted; retry after the `Retry-After` header’s seconds.' },
} as const;

type Status = keyof typeof RESPONSES;

/**
 * Statuses an operation answers beyond what its shape shows, keyed `METHOD /path` (OpenAPI path
 * form), each with the error codes that produce it (they go into the response's description).
 */
const EXTRA: Record<string, Partial<Record<Status, string[]>>> = {
  'POST /api/owners': { '403': ['forbidden'], '409': ['owner_exists'] },
  'POST /api/agent/run': { '429': ['capacity_exhausted'] },
  'POST /api/agent/batch': { '429': ['capacity_exhausted'] },
  'POST /api/agent/{runId}/approve': { '409': ['no_pending_gate'] },
  'POST /api/agent/{runId}/input': { '409': ['no_pending_input'] },
  'POST /api/agent/runs/{runId}/resume': { '409': ['run_not_resumable', 'sandbox_weakened'], '429': ['capacity_exhausted'] },
  'POST /api/agent/runs/{runId}/fork': { '409': ['run_not_finished'], '429': ['capacity_exhausted'] },
  'POST /api/agent/runs/{runId}/rewind': { '409': ['run_not_finished'], '429': ['capacity_exhausted'] },
  'POST /api/agent/runs/{runId}/retry': { '409': ['run_not_retryable', 'retry_no_current_version'], '429': ['capacity_exhausted'] },
  'POST /api/agent/runs/{runId}/retry/preview': { '409': ['run_not_retryable', 'retry_no_current_version'] },
  'POST /api/agent/tasks': { '429': ['capacity_exhausted'] },
  'POST /api/plugins': { '409': ['plugin_version_not_higher'] },
  'PUT /api/workflows/{id}': { '409': ['workflow_revision_conflict'] },
  'POST /api/workflows/{id}/run': { '409': ['workflow_not_published', 'sandbox_weakened'], '429': ['capacity_exhausted'] },
  'GET /api/workflows/{id}/inputs/{field}/options': { '409': ['workflow_options_tool_unusable'] },
  'POST /api/workflows/{id}/webhooks': { '409': ['workflow_not_published'] },
  'POST /api/workflow-hooks/{triggerId}': { '403': ['webhook_peer_forbidden', 'forbidden_host'], '409': ['webhook_trigger_paused', 'webhook_event_interrupted', 'workflow_not_published'], '429': ['capacity_exhausted'] },
  'POST /api/chat': { '409': ['chat_busy'] },
  'POST /api/chat/{id}/approve': { '409': ['chat_no_pending_gate'] },
  'POST /api/inbox/{id}': { '409': ['inbox_item_settled', 'no_pending_input'] },
};

/** The shape of an operation that decides its error answers. */
export interface OperationShape {
  method: string;
  /** OpenAPI path form (`/api/workflows/{id}`). */
  path: string;
  hasBody: boolean;
  hasQuery: boolean;
}

const ENVELOPE_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/**
 * The 4xx responses of one operation: a `$ref` to the shared response of its status, or, where
 * `EXTRA` names the codes, the same response described with those codes.
 */
export function errorResponses(op: OperationShape): Record<string, unknown> {
  const hasParams = op.path.includes('{');
  const extra = EXTRA[`${op.method.toUpperCase()} ${op.path}`] ?? {};
  const statuses = new Set<Status>(['401']);
  if (op.hasBody || op.hasQuery || hasParams) statuses.add('400');
  if (hasParams) statuses.add('404');
  if (op.hasBody) statuses.add('413');
  for (const s of Object.keys(extra) as Status[]) statuses.add(s);
  return Object.fromEntries(
    [...statuses].sort().map((s) => {
      const codes = extra[s];
      if (!codes) return [s, { $ref: `#/components/responses/${RESPONSES[s].name}` }];
      return [s, { description: `${RESPONSES[s].description} Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`, content: ENVELOPE_CONTENT }];
    }),
  );
}

/** `components.responses`: the shared error responses of the statuses the route's shape decides. */
export function errorResponseComponents(): Record<string, unknown> {
  return Object.fromEntries((['400', '401', '404', '413'] as const).map((s) => [RESPONSES[s].name, { description: RESPONSES[s].description, content: ENVELOPE_CONTENT }]));
}

/** The shared error envelope every 4xx and 5xx answer carries. */
export const ERROR_ENVELOPE = {
  type: 'object',
  description: 'The error envelope of every failed request.',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'The stable error code (lower snake case).' },
        message: { type: 'string', description: 'The message in the caller’s language (Accept-Language: en or zh-CN).' },
        details: {
          description: 'For validation errors, the list of problems.',
          type: 'array',
          items: {
            type: 'object',
            required: ['code'],
            properties: { code: { type: 'string' }, field: { type: 'string' }, stepId: { type: 'string' }, message: { type: 'string' }, params: { type: 'object' } },
          },
        },
      },
    },
  },
} as const;
