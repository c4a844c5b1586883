import { capPermissionMode, type JsonSchema, PERMISSION_MODES, type PermissionMode, stableHash } from '@fengyu/protocol';
import { keptFilesSchema } from '../files/kept-files';
import { FixedToolSource, type Tool, type ToolContext } from '../tools/tool';
import { type ScheduleService, toView } from './schedule.service';

/**
 * `task_schedule`: the model creates a schedule with the same body and checks as
 * `POST /api/agent/schedules`. Effect `external`: it makes unattended runs happen later.
 * The schedule's mode is capped at the calling run's or chat's mode (docs/schedules.md): a run in
 * `approve-for-me` cannot make a `full-access` schedule whose `requiresApproval` steps would then
 * run with nobody approving. The result says when the mode was lowered.
 */

const recurrenceSchema: JsonSchema = {
  type: 'object',
  description:
    'daily {kind,time "HH:MM",timeZone}; weekly {kind,time,timeZone,weekdays [1..7], Monday = 1}; monthly {kind,time,timeZone,day 1..31 or "last"}; interval {kind,everySeconds >= 60, expires after 7 days}; once {kind,delaySeconds >= 60}. Default: daily 09:00 in the host time zone.',
  properties: {
    kind: { type: 'string', enum: ['daily', 'weekly', 'monthly', 'interval', 'once'] },
    time: { type: 'string' },
    timeZone: { type: 'string' },
    weekdays: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 7 } },
    day: { anyOf: [{ type: 'integer', minimum: 1, maximum: 31 }, { type: 'string', enum: ['last'] }] },
    everySeconds: { type: 'integer', minimum: 60 },
    delaySeconds: { type: 'integer', minimum: 60 },
  },
  required: ['kind'],
};

export const TASK_SCHEDULE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    workflowId: { type: 'string', description: 'A published workflow.' },
    inputs: { type: 'object', description: 'Inputs of the workflow.' },
    files: keptFilesSchema(' The schedule keeps its own copy of each, for every fire.'),
    permissionMode: {
      type: 'string',
      enum: ['ask', 'approve-for-me', 'full-access'],
      description: 'Mode of the unattended runs, at most your own current mode (a higher one is lowered to it); under "ask", a workflow with a step that would wait for approval is refused.',
    },
    runImmediately: { type: 'boolean', description: 'Also run once now.' },
    recurrence: recurrenceSchema,
    recurring: { type: 'boolean', description: 'false: run once after the interval instead of repeating (default true).' },
  },
  required: ['workflowId', 'permissionMode'],
  additionalProperties: false,
};

/** The `task_schedule` tool: a schedule of a published workflow, created as the caller. */
export function scheduleToolSource(service: ScheduleService): FixedToolSource {
  const tool: Tool = {
    name: 'task_schedule',
    description: 'Run a published workflow on a schedule (daily, weekly, monthly at a clock time, a fixed interval, or once after a delay). Returns the schedule.',
    inputSchema: TASK_SCHEDULE_SCHEMA,
    effect: 'external',
    source: 'builtin',
    id: 'builtin:task_schedule',
    schemaRevision: stableHash(TASK_SCHEDULE_SCHEMA),
    idempotent: false,
    available: true,
    invoke: async (args: Record<string, unknown>, ctx: ToolContext) => {
      const requested = args.permissionMode;
      // an unknown value is left for the service to refuse with its own error
      const granted = PERMISSION_MODES.includes(requested as PermissionMode) ? capPermissionMode(requested as PermissionMode, ctx.permissionMode) : requested;
      const row = await service.create(ctx.owner, { ...args, permissionMode: granted });
      const lowered = granted !== requested ? { permissionModeLowered: { requested, granted, reason: `a tool call cannot create a schedule above the caller's mode (${ctx.permissionMode})` } } : {};
      return { scheduleId: row.id, schedule: toView(row), ...lowered };
    },
  };
  return new FixedToolSource([tool]);
}
