/** JSON Schemas of the agent routes (documentation + Fastify validation; plans are validated by protocol). */

export const runIdParams = {
  type: 'object',
  required: ['runId'],
  properties: { runId: { type: 'string', maxLength: 100 } },
} as const;

export const startBody = {
  type: 'object',
  properties: {
    goal: { type: 'string', maxLength: 20000 },
    config: { type: 'object' },
    workflow: { type: 'object', description: 'An AgentPlan; omit to let the model plan from goal.' },
    inputs: { type: 'object' },
    files: { type: 'array', maxItems: 64, items: { type: 'object' } },
  },
} as const;

export const runIdReply = {
  200: { type: 'object', properties: { runId: { type: 'string' } }, required: ['runId'] },
} as const;

export const listQuery = {
  type: 'object',
  properties: {
    q: { type: 'string', maxLength: 500 },
    status: { type: 'string', description: 'Comma-separated statuses.' },
    workflowId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$', description: 'Only the runs of this workflow of yours (an unknown one, or another owner\'s, lists nothing).' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    cursor: { type: 'string', maxLength: 500 },
  },
} as const;

export const streamQuery = {
  type: 'object',
  required: ['runId'],
  properties: {
    runId: { type: 'string', maxLength: 100 },
    token: { type: 'string' },
    lastEventId: { type: 'integer', minimum: 0 },
  },
} as const;

export const rewindBody = {
  type: 'object',
  required: ['keepSteps'],
  properties: { keepSteps: { type: 'integer' } },
} as const;

/** `version`: checked by the service (a coded error naming the value), not by the schema. */
export const retryBody = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { version: {} },
} as const;

export const batchBody = {
  type: 'object',
  required: ['runs'],
  properties: {
    runs: { type: 'array', items: startBody },
    capabilityMode: { type: 'string', enum: ['read-only'] },
  },
} as const;
