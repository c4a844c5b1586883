import type { PlanStep } from '@fengyu/protocol';
import type { Clock } from '../clock';
import type { EventLog, NewEvent } from '../events/event-log';
import type { CatalogSnapshot, ToolCatalog } from '../tools/catalog';
import { parsePlan, type RunRepository, type RunRow } from './run.repository';

/**
 * Runs that were live when the host stopped. Each is marked `interrupted` (resumable). A step
 * whose tool was running is `uncertain` when that tool is neither read-only nor idempotent (its
 * effect may or may not have happened, e.g. a command or an e-mail): a `step_uncertain` event
 * says so, and a resume shows the step at the plan review instead of running it again silently.
 * Other running steps simply failed (`interrupted`) and run again on resume.
 */

export interface OrphanDeps {
  events: EventLog;
  repo: RunRepository;
  catalog: ToolCatalog;
  clock: Clock;
}

/** A model step calls tools of its own; an unknown tool is judged by what it might have done. */
export function mayHaveTakenEffect(step: PlanStep | undefined, catalog: CatalogSnapshot | undefined): boolean {
  if (!step?.tool) return true;
  const tool = catalog?.get(step.tool);
  if (!tool) return true;
  return !(tool.effect === 'read' || tool.idempotent === true);
}

async function uncertainEvents(deps: OrphanDeps, row: RunRow, running: string[]): Promise<NewEvent[]> {
  if (running.length === 0) return [];
  const plan = parsePlan(row);
  const catalog = await deps.catalog.snapshot(row.owner).catch(() => undefined);
  const out: NewEvent[] = [];
  for (const stepId of running) {
    const step = plan?.steps.find((s) => s.id === stepId);
    if (!mayHaveTakenEffect(step, catalog)) continue;
    const what = step?.tool ? `"${step.tool}"` : 'the model step';
    out.push({ type: 'step_uncertain', stepId, ...(step?.tool ? { tool: step.tool } : {}), reason: `the host stopped while ${what} was running; it may have taken effect` });
  }
  return out;
}

/** Thrown inside the commit to roll it back when the run already ended (another sweeper was first). */
class AlreadyEnded extends Error {}

/**
 * Marks one orphaned run interrupted, its running steps failed or uncertain, with their events,
 * in one commit — only while the run is still live, so concurrent sweepers interrupt it once.
 * True when this call interrupted it.
 */
export async function interruptOrphan(deps: OrphanDeps, row: RunRow): Promise<boolean> {
  const running = (await deps.repo.steps(row.id)).filter((e) => e.status === 'running').map((e) => e.stepId);
  const uncertain = await uncertainEvents(deps, row, running);
  const ids = uncertain.map((e) => (e as { stepId: string }).stepId);
  const now = new Date(deps.clock.now()).toISOString();
  try {
    await deps.events.commit(row.id, [...uncertain, { type: 'interrupted', reason: 'the host stopped while this run was live' }], async (trx) => {
      const live = await deps.repo.updateIfLive(row.id, { status: 'interrupted', gate: null, updated_at: now, finished_at: now, error: 'interrupted: the host stopped while this run was live' }, trx);
      if (!live) throw new AlreadyEnded();
      await deps.repo.markInterruptedSteps(row.id, ids, trx);
    });
  } catch (err) {
    if (err instanceof AlreadyEnded) return false;
    throw err;
  } finally {
    deps.events.forget(row.id);
  }
  return true;
}
