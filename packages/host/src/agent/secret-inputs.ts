import { inputNamesIn, type PlanStep, REDACTED, sealInputs } from '@fengyu/protocol';
import type { RunSecrets } from './run-types';

/**
 * A workflow's secret inputs (`format: "password"`, `writeOnly`; docs/secrets.md) are write-only
 * like a tool's secret arguments: the run's row, goal, events, gates and detail hold the marker,
 * and the value is sealed in the vault as the owner's internal value `run:<runId>/input/<name>`
 * (so it is also redacted from every tool result, `[redacted:run:…]`). Only a tool call's own
 * copy of its arguments reads the value, right before dispatch; a run continuing from its row
 * (a restart, an answered gate) reads it from the vault again, and a retry or fork copies it.
 */

export function secretInputKey(runId: string, name: string): string {
  return `run:${runId}/input/${name}`;
}

/** Keeps the run's secret input values in the vault and answers the inputs as stored and shown. */
export async function keepSecretInputs(secrets: RunSecrets | undefined, owner: string, runId: string, inputs: Record<string, unknown>, names: readonly string[]): Promise<Record<string, unknown>> {
  const sealed = sealInputs(inputs, names);
  if (sealed === inputs) return inputs;
  const values: Record<string, string> = {};
  for (const n of names) if (typeof inputs[n] === 'string' && inputs[n] !== REDACTED) values[secretInputKey(runId, n)] = inputs[n] as string;
  // without a vault the value is kept nowhere: the run sees the marker (never a clear copy stored)
  await secrets?.mergeInternal(owner, values);
  return sealed;
}

/** A stored run's inputs with its secret inputs' values read back from the vault (a retry or fork of it). */
export function revealSecretInputs(secrets: RunSecrets | undefined, owner: string, runId: string, inputs: Record<string, unknown>, names: readonly string[] | undefined): Record<string, unknown> {
  if (!secrets || !names?.length) return inputs;
  const out = { ...inputs };
  for (const n of names) {
    const v = out[n] === REDACTED ? secrets.getInternal(owner, secretInputKey(runId, n)) : undefined;
    if (v !== undefined) out[n] = v;
  }
  return out;
}

/** The values of the secret inputs a step's arguments read, for its dispatch copy; undefined when it reads none. */
export function secretInputsFor(step: PlanStep, run: { id: string; owner: string; config: { secretInputs?: string[] } }, secrets: RunSecrets | undefined): Record<string, unknown> | undefined {
  const names = run.config.secretInputs;
  if (!secrets || !names?.length || !step.arguments) return undefined;
  const read = inputNamesIn(step.arguments).filter((n) => names.includes(n));
  if (read.length === 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const n of read) {
    const v = secrets.getInternal(run.owner, secretInputKey(run.id, n));
    if (v !== undefined) out[n] = v;
  }
  return out;
}
