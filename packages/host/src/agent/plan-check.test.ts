import { type AgentPlan, FengYuError } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import type { SecretsView } from '../secrets/vault';
import { CatalogSnapshot } from '../tools/catalog';
import type { Tool } from '../tools/tool';
import { PlanChecker } from './plan-check';
import type { RunSecrets } from './run-types';

const tool = (name: string): Tool => ({
  name,
  description: name,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  effect: 'read',
  source: 'builtin',
  id: `builtin:${name}`,
  schemaRevision: '1',
  idempotent: true,
  available: true,
  invoke: async () => 'ok',
});

/** A catalog that counts its lookups: a check that walks the plan's steps looks each tool up. */
function countingCatalog(names: string[]): { catalog: CatalogSnapshot; lookups: () => number } {
  const catalog = new CatalogSnapshot(names.map(tool));
  let n = 0;
  const get = catalog.get.bind(catalog);
  catalog.get = (name: string) => {
    n += 1;
    return get(name);
  };
  return { catalog, lookups: () => n };
}

function secretsOf(names: Set<string>): RunSecrets {
  const view: SecretsView = { names, value: () => undefined, redactions: [] };
  return { view: () => view } as unknown as RunSecrets;
}

const cfg = { inputNames: [], fileInputNames: [], readOnly: false };
const draft = (): unknown => ({ steps: [{ id: 'a', tool: 'echo', arguments: { text: '{{secrets.KEY}}' } }, { id: 'b', tool: 'echo', dependsOn: ['a'] }] });
const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (err) {
    return ((err as FengYuError).details as Array<{ code: string }>).map((p) => p.code);
  }
  return [];
};

describe('PlanChecker', () => {
  it('returns a plan it checked, unchanged and checked again against the same things, without walking its steps again', () => {
    const { catalog, lookups } = countingCatalog(['echo']);
    const checker = new PlanChecker(secretsOf(new Set(['KEY'])));
    const plan = checker.check(draft(), catalog, cfg, undefined, 'me');
    const walked = lookups();
    expect(walked).toBeGreaterThan(0);
    expect(checker.check(plan, catalog, cfg, undefined, 'me')).toBe(plan);
    expect(lookups()).toBe(walked);
  });

  it('checks anew whatever differs: a secret deleted meanwhile, another catalog, another config, an equal plan that is not the one it returned', () => {
    const names = new Set(['KEY']);
    const { catalog, lookups } = countingCatalog(['echo']);
    const checker = new PlanChecker(secretsOf(names));
    const plan = checker.check(draft(), catalog, cfg, undefined, 'me');
    // an equal copy (an edited plan sent back as it was) is walked again
    let walked = lookups();
    checker.check(structuredClone(plan), catalog, cfg, undefined, 'me');
    expect(lookups()).toBeGreaterThan(walked);
    // the same plan under read-only mode, or against a catalog without its tool
    walked = lookups();
    checker.check(plan, catalog, { ...cfg, readOnly: true }, undefined, 'me');
    expect(lookups()).toBeGreaterThan(walked);
    expect(problemsOf(() => checker.check(plan, new CatalogSnapshot([]), cfg, undefined, 'me')).length).toBeGreaterThan(0);
    // the secret it names deleted since: the same plan is now refused
    names.delete('KEY');
    const codes = problemsOf(() => checker.check(plan, catalog, cfg, undefined, 'me'));
    expect(codes.length).toBeGreaterThan(0);
    expect(() => checker.check(plan, catalog, cfg, undefined, 'me')).toThrow(FengYuError);
  });

  it('a refused plan is never remembered as checked', () => {
    const { catalog } = countingCatalog(['echo']);
    const checker = new PlanChecker(secretsOf(new Set()));
    const bad = draft() as AgentPlan;
    expect(problemsOf(() => checker.check(bad, catalog, cfg, undefined, 'me')).length).toBeGreaterThan(0);
    expect(problemsOf(() => checker.check(bad, catalog, cfg, undefined, 'me')).length).toBeGreaterThan(0);
  });
});
