import { inputNamesIn, type PlanStep, REDACTED, sealInputs } from '@fengyu/protocol';
import type { KeptSeal } from '../secrets/vault';
import type { RunSecrets } from './run-types';

/**
 * A workflow's secret inputs (`format: "password"`, `writeOnly`; docs/secrets.md) are write-only
 * like a tool's secret arguments: the run's row, goal, events, gates and detail hold the marker,
 * and the value is sealed in the vault as the owner's internal value `run:<runId>/input/<name>`
 * (so it is also redacted from every tool result, `[redacted:run:…]`). Only a tool call's own
 * copy of its arguments reads the value, right before dispatch; a run continuing from its row
 * (a restart, an answered gate) reads it from the vault again, and a retry or fork copies it.
 */

/** The vault's side a holder of secret inputs uses. */
export type InputVault = Pick<RunSecrets, 'getInternal' | 'mergeInternal' | 'refreshInternal'> & {
  /** Removes the owner's internal values under a prefix (from the database, whatever this host holds in memory). */
  dropInternal(owner: string, prefix: string): Promise<void>;
  /** Seals values for a holder to write with its own row (see `sealKeptInputs`). */
  sealKept(owner: string, values: Record<string, string>): KeptSeal;
};

/** Removes every secret input value a holder kept (`scope` as in keptInputKey). */
export async function dropKeptInputs(secrets: InputVault | undefined, owner: string, scope: string): Promise<void> {
  await secrets?.dropInternal(owner, keptInputKey(scope, ''));
}

export function secretInputKey(runId: string, name: string): string {
  return keptInputKey(`run:${runId}`, name);
}

/**
 * The vault name of a secret input kept by its holder: `run:<id>`, and the holders that start runs
 * later with inputs they keep — `task:<id>` (a queued background task), `schedule:<id>`,
 * `trigger:<id>` (a webhook trigger's defaults). The holder's row keeps the marker.
 */
export function keptInputKey(scope: string, name: string): string {
  return `${scope}/input/${name}`;
}

/** Keeps the run's secret input values in the vault and answers the inputs as stored and shown. */
export function keepSecretInputs(secrets: Pick<RunSecrets, 'mergeInternal'> | undefined, owner: string, runId: string, inputs: Record<string, unknown>, names: readonly string[]): Promise<Record<string, unknown>> {
  return keepInputs(secrets, owner, `run:${runId}`, inputs, names);
}

/** Keeps a holder's secret input values (a string, not the marker) in the vault under `scope`; answers the inputs as stored and shown. */
export async function keepInputs(secrets: Pick<RunSecrets, 'mergeInternal'> | undefined, owner: string, scope: string, inputs: Record<string, unknown>, names: readonly string[]): Promise<Record<string, unknown>> {
  const sealed = sealInputs(inputs, names);
  if (sealed === inputs) return inputs;
  // without a vault the value is kept nowhere: the run sees the marker (never a clear copy stored)
  await secrets?.mergeInternal(owner, keptValues(scope, inputs, names));
  return sealed;
}

/**
 * The same for a holder that writes the values with its own row, in its own transaction (a task:
 * its admission, so a refused or rolled-back task leaves nothing in the vault): nothing is written
 * here; `seal` is absent when no value is kept (none given, or no vault).
 */
export function sealKeptInputs(vault: Pick<InputVault, 'sealKept'> | undefined, owner: string, scope: string, inputs: Record<string, unknown>, names: readonly string[]): { inputs: Record<string, unknown>; seal?: KeptSeal } {
  const sealed = sealInputs(inputs, names);
  if (sealed === inputs) return { inputs };
  return { inputs: sealed, ...(vault ? { seal: vault.sealKept(owner, keptValues(scope, inputs, names)) } : {}) };
}

/** The secret input values given (a string, not the marker), by their vault names under `scope`. */
function keptValues(scope: string, inputs: Record<string, unknown>, names: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const n of names) if (typeof inputs[n] === 'string' && inputs[n] !== REDACTED) values[keptInputKey(scope, n)] = inputs[n] as string;
  return values;
}

/** Inputs whose marker a holder kept a value for (the first of `scopes` that has one), with the value read back from the vault. */
export function revealKeptInputs(secrets: Pick<RunSecrets, 'getInternal'> | undefined, owner: string, scopes: readonly string[], inputs: Record<string, unknown>): Record<string, unknown> {
  if (!secrets) return inputs;
  let out: Record<string, unknown> | undefined;
  for (const [n, v] of Object.entries(inputs)) {
    if (v !== REDACTED) continue;
    for (const scope of scopes) {
      const value = secrets.getInternal(owner, keptInputKey(scope, n));
      if (value === undefined) continue;
      out ??= { ...inputs };
      out[n] = value;
      break;
    }
  }
  return out ?? inputs;
}

/**
 * A stored run's secret input values, read again from the database before the run goes on or is
 * copied (answered, resumed, retried, forked) where another host may have kept them (a shared database).
 */
export async function refreshRunInputs(secrets: Pick<RunSecrets, 'refreshInternal'> | undefined, row: { id: string; owner: string; config: string }): Promise<void> {
  const names = (JSON.parse(row.config) as { secretInputs?: string[] }).secretInputs;
  if (names?.length) await secrets?.refreshInternal(row.owner, [secretInputKey(row.id, '')]);
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
