/** JSON Schemas of the workflow routes (documentation + Fastify validation; content is validated by protocol). */

const id = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' } as const;
const revision = { type: 'integer', minimum: 1, description: 'The revision this change is based on (409 when stale).' } as const;

export const idParams = { type: 'object', required: ['id'], properties: { id } } as const;

export const versionParams = { type: 'object', required: ['id', 'version'], properties: { id, version: { type: 'integer', minimum: 1 } } } as const;

export const fieldParams = { type: 'object', required: ['id', 'field'], properties: { id, field: { type: 'string', minLength: 1, maxLength: 200 } } } as const;

const draftProperties = {
  name: { type: 'string', description: 'At most 200 characters.' },
  description: { type: 'string', description: 'At most 4000 characters.' },
  inputSchema: { type: 'object', description: 'JSON Schema of the run-time inputs (type "object").' },
  plan: { type: 'object', description: 'The compiled AgentPlan.' },
  graph: { type: ['object', 'null'], description: 'The authored canvas graph, stored verbatim.' },
  layout: { type: 'object', description: 'Node positions by step id (used when no graph is saved).' },
  errorWorkflowId: { type: ['string', 'null'], maxLength: 64, description: 'A published workflow of yours with an object input failedRun, submitted as a background task when a run of this one fails (not versioned; null clears it).' },
  mcp: { type: 'object', description: 'Serve the published version over MCP: {enabled, permissionMode?} (not versioned; takes effect at once).' },
} as const;

export const createBody = {
  type: 'object',
  description: 'A definition, or {templateId, name?} to create one from a template.',
  properties: { ...draftProperties, templateId: { type: 'string', maxLength: 64 } },
} as const;

export const updateBody = {
  type: 'object',
  required: ['revision'],
  description: 'Fields left out keep their current value; a new plan without a graph drops the saved graph.',
  properties: { ...draftProperties, revision },
} as const;

export const publishBody = { type: 'object', required: ['revision'], properties: { revision } } as const;

export const restoreBody = { type: 'object', required: ['version', 'revision'], properties: { version: { type: 'integer', minimum: 1 }, revision } } as const;

export const runBody = {
  type: 'object',
  properties: {
    inputs: { type: 'object' },
    config: { type: 'object', description: 'Run config; planApproval defaults to false for saved workflows.' },
    files: { type: 'array', maxItems: 64, items: { type: 'object' }, description: '{name, refs | nativePath | createSharedDirectory} per file input.' },
    version: {
      anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', enum: ['draft', 'published'] }],
      description: 'What runs: the current draft (default), the active published version, or a version number.',
    },
  },
} as const;

export const runIdReply = { 200: { type: 'object', required: ['runId'], properties: { runId: { type: 'string' } } } } as const;
