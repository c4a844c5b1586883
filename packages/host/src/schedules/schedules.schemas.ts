/**
 * JSON Schemas of the schedule routes, for the OpenAPI document only: the bodies are validated by
 * `schedule-input.ts`, whose errors name the field in the caller's language. (No types on the
 * fields here, so the HTTP layer neither coerces nor refuses them first.)
 */

const recurrence = {
  description:
    'One of {kind:"daily", time:"HH:MM", timeZone}, {kind:"weekly", time, timeZone, weekdays:[1..7] (Monday = 1)}, {kind:"monthly", time, timeZone, day: 1..31 | "last"}, {kind:"interval", everySeconds ≥ 60}, {kind:"once", delaySeconds ≥ 60}. Default: daily at 09:00 in the host\'s time zone.',
} as const;

export const createBody = {
  type: 'object',
  properties: {
    workflowId: { description: 'A published workflow of yours.' },
    inputs: { description: 'The workflow inputs (checked against its input schema).' },
    files: { description: '[{name, refs: [FileRef id]}] per file input: the schedule keeps its own copy of each upload for every fire, released when it is deleted.' },
    permissionMode: { description: 'Required: "ask", "approve-for-me" or "full-access" (under "ask", steps that would wait for approval are refused).' },
    runImmediately: { description: 'Also fire once right away.' },
    recurrence,
    recurring: { description: 'false: fire once, after the interval\'s delay ({kind:"interval", everySeconds} becomes {kind:"once", delaySeconds}); default true.' },
  },
} as const;

export const previewBody = {
  type: 'object',
  properties: {
    recurrence,
    from: { description: 'ISO-8601 instant; default now. An interval is anchored here.' },
    count: { description: 'How many instants (1..50, default 10).' },
  },
} as const;

export const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 100 } } } as const;

export const listQuery = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: { type: 'string', maxLength: 100 } },
} as const;
