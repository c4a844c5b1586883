import type { CatalogEntry, JsonSchema } from '@fengyu/protocol';

/**
 * The flow settings' "Error workflow" choices (docs/workflows.md, "Failure handling"): a
 * published workflow of the owner whose published input schema has an object input
 * `failedRun`, never the flow itself. The host checks the same on save; this only lists them.
 */

/** Why a workflow cannot be picked. */
export type ErrorWorkflowBlock = 'self' | 'notPublished' | 'noFailedRun';

export interface ErrorWorkflowChoice {
  id: string;
  name: string;
  /** Undefined when it may be picked. */
  blocked?: ErrorWorkflowBlock;
}

/** What the choices need of a definition. */
export interface WorkflowSummary {
  id: string;
  name: string;
  publishedVersion: number | null;
  inputSchema?: JsonSchema;
}

/** Whether an input schema has an object input `failedRun`. */
export function hasFailedRunInput(schema: JsonSchema | undefined): boolean {
  const prop = (schema?.properties as Record<string, JsonSchema> | undefined)?.failedRun;
  const type = prop?.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object'));
}

/**
 * Every other workflow as a choice, pickable ones first (each group by name): a published
 * workflow is judged by its published contract (its `run_workflow_*` catalog entry), falling
 * back to the definition's own schema when the catalog does not list it.
 */
export function errorWorkflowChoices(defs: readonly WorkflowSummary[], catalog: readonly CatalogEntry[], selfId: string | undefined): ErrorWorkflowChoice[] {
  const published = new Map(catalog.filter((e) => e.source === 'workflow' && e.origin).map((e) => [e.origin as string, e.inputSchema]));
  const choices = defs.map((d): ErrorWorkflowChoice => {
    const blocked: ErrorWorkflowBlock | undefined =
      d.id === selfId ? 'self' : d.publishedVersion === null ? 'notPublished' : hasFailedRunInput(published.get(d.id) ?? d.inputSchema) ? undefined : 'noFailedRun';
    return blocked ? { id: d.id, name: d.name, blocked } : { id: d.id, name: d.name };
  });
  return choices.sort((a, b) => Number(!!a.blocked) - Number(!!b.blocked) || a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}
