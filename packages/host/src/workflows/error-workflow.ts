import { FengYuError } from '@fengyu/protocol';
import '../agent/failure.errors';
import type { VersionRow, WorkflowRow } from './workflow.repository';

/**
 * A workflow's error workflow (docs/workflows.md "Failure handling"): a published workflow of the
 * same owner, never itself, whose published input schema has an object input `failedRun` (the
 * document of the failed run it is started with). Checked on every save that sets it.
 */

/** The input an error workflow is started with. */
export const FAILED_RUN_INPUT = 'failedRun';

/** What the check reads: the named workflow (undefined: none of this owner's) and its active version. */
export interface ErrorWorkflowLookup {
  row(id: string): Promise<WorkflowRow | undefined>;
  version(id: string, version: number): Promise<VersionRow | undefined>;
}

/** Whether a JSON Schema declares `failedRun` as an object input. */
export function hasFailedRunInput(inputSchema: unknown): boolean {
  const props = (inputSchema as { properties?: Record<string, { type?: unknown }> } | null)?.properties;
  const input = props && Object.hasOwn(props, FAILED_RUN_INPUT) ? props[FAILED_RUN_INPUT] : undefined;
  return !!input && (input.type === 'object' || (Array.isArray(input.type) && input.type.includes('object')));
}

/**
 * The value to store for a save body's `errorWorkflowId`: undefined (leave as is), null (clear) or
 * the checked id; throws a 400 naming what is wrong (`error_workflow_*`, en and zh-CN).
 */
export async function checkErrorWorkflow(value: unknown, selfId: string | undefined, lookup: ErrorWorkflowLookup): Promise<string | null | undefined> {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  if (typeof value !== 'string') throw new FengYuError('invalid_request', { reason: 'errorWorkflowId must be a workflow id or null' });
  if (value === selfId) throw new FengYuError('error_workflow_self', {});
  const row = await lookup.row(value);
  if (!row) throw new FengYuError('error_workflow_unknown', { errorWorkflowId: value });
  if (row.published_version === null) throw new FengYuError('error_workflow_unpublished', { errorWorkflowId: value });
  const active = await lookup.version(value, row.published_version);
  if (!active || !hasFailedRunInput(JSON.parse(active.input_schema))) throw new FengYuError('error_workflow_no_failed_run', { errorWorkflowId: value });
  return value;
}
