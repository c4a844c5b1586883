import { type CatalogEntry, graphToPlan, planToGraph, type StepNode, validatePlan } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { connectionToEdge } from './canvas-map';
import { diagnose, diagnosticsByNode } from './diagnostics';
import { failureForm, failurePatch, failurePorts, retryBlock, setOnError } from './failure';

/** Failure handling on the canvas: the form ⇄ step fields, retry safety, the ok/error ports and their edges. */

const entry = (name: string, effect: CatalogEntry['effect']): CatalogEntry => ({ name, effect, source: 'builtin', available: true, inputSchema: { type: 'object' } }) as unknown as CatalogEntry;

describe('the On error / Timeout / Retry form', () => {
  it('reads the defaults and writes nothing back for them', () => {
    const form = failureForm({});
    expect(form).toEqual({ onError: 'fail', timeoutSeconds: '', attempts: 1, delaySeconds: 0.5 });
    expect(failurePatch(form)).toEqual({ onError: undefined, timeoutMs: undefined, retry: undefined });
  });

  it('writes seconds as milliseconds, keeps an out-of-range timeout for the validator to name, and clamps attempts and delay', () => {
    expect(failurePatch({ onError: 'branch', timeoutSeconds: ' 30 ', attempts: 3, delaySeconds: 2 })).toEqual({ onError: 'branch', timeoutMs: 30_000, retry: { maxAttempts: 3, initialBackoffMs: 2000 } });
    expect(failurePatch({ onError: 'continue', timeoutSeconds: '0', attempts: 9, delaySeconds: 500 })).toEqual({ onError: 'continue', timeoutMs: 0, retry: { maxAttempts: 5, initialBackoffMs: 60_000 } });
    expect(failurePatch({ onError: 'fail', timeoutSeconds: 'soon', attempts: 0, delaySeconds: -1 })).toEqual({ onError: undefined, timeoutMs: undefined, retry: undefined });
    // the shared validator names a timeout outside 1 s..1 h, as the Problems list shows it
    const tooLong = failurePatch({ onError: 'fail', timeoutSeconds: '3601', attempts: 1, delaySeconds: 0 }).timeoutMs;
    const result = validatePlan({ steps: [{ id: 'a', tool: 'echo', arguments: {}, timeoutMs: tooLong }] }, { tool: () => ({ name: 'echo', effect: 'read', available: true, idempotent: false, source: 'builtin', inputSchema: { type: 'object' } }), inputNames: new Set() });
    expect(result.ok ? [] : result.problems.map((p) => p.code)).toEqual(['step_timeout_range']);
  });

  it('round-trips every in-range form through the step fields and the plan', () => {
    const forms = fc.record({
      onError: fc.constantFrom('fail' as const, 'continue' as const, 'branch' as const),
      timeoutSeconds: fc.oneof(fc.constant(''), fc.integer({ min: 1, max: 3600 }).map(String)),
      attempts: fc.integer({ min: 1, max: 5 }),
      delaySeconds: fc.integer({ min: 0, max: 600 }).map((d) => d / 10),
    });
    fc.assert(
      fc.property(forms, (form) => {
        const patch = failurePatch(form);
        const g = planToGraph({ steps: [{ id: 'a', tool: 'echo', arguments: {} }] });
        const node = g.nodes.find((n) => n.id === 'a') as StepNode;
        Object.assign(node.data, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
        const again = planToGraph(graphToPlan(g).plan).nodes.find((n) => n.id === 'a') as StepNode;
        const back = failureForm(again.data);
        expect(back.onError).toBe(form.onError);
        expect(back.timeoutSeconds).toBe(form.timeoutSeconds);
        expect(back.attempts).toBe(form.attempts);
        if (form.attempts > 1) expect(back.delaySeconds).toBe(form.delaySeconds);
      }),
    );
  });
});

describe('retry safety', () => {
  const g = planToGraph({ steps: [{ id: 'f', tool: 'web_fetch', arguments: {} }, { id: 'c', tool: 'execute_command', arguments: {} }, { id: 'm', instruction: 'x' }, { id: 'p', tool: 'web_fetch', arguments: {}, pinned: { result: 1 } }] });
  const node = (id: string) => g.nodes.find((n) => n.id === id) as StepNode;

  it('offers retry for a read tool and an idempotent plugin tool, and names why not otherwise', () => {
    expect(retryBlock(node('f'), entry('web_fetch', 'read'))).toBeUndefined();
    expect(retryBlock(node('c'), { ...entry('x', 'write'), source: 'plugin', idempotent: true } as CatalogEntry)).toBeUndefined();
    expect(retryBlock(node('c'), entry('execute_command', 'command'))).toEqual({ reason: 'unsafe', tool: 'execute_command', effect: 'command' });
    expect(retryBlock(node('c'), { ...entry('x', 'write'), idempotent: true } as CatalogEntry)).toMatchObject({ reason: 'unsafe' });
    expect(retryBlock(node('m'), undefined)).toEqual({ reason: 'model' });
    expect(retryBlock(node('p'), entry('web_fetch', 'read'))).toEqual({ reason: 'pinned' });
    expect(retryBlock(node('f'), undefined)).toEqual({ reason: 'unknown', tool: 'web_fetch' });
  });
});

describe('the ok / error ports', () => {
  const plan = () =>
    planToGraph({
      steps: [
        { id: 'run', tool: 'execute_command', arguments: {} },
        { id: 'next', tool: 'echo', arguments: {}, dependsOn: ['run'] },
        { id: 'alert', tool: 'echo', arguments: {} },
      ],
    });

  it('a node set to branch offers ok and error; its plain connections move to ok, and an error connection compiles to run:error', () => {
    const g = plan();
    expect(failurePorts(g.nodes.find((n) => n.id === 'run') as StepNode)).toEqual([]);
    setOnError(g, 'run', 'branch');
    expect(failurePorts(g.nodes.find((n) => n.id === 'run') as StepNode)).toEqual(['ok', 'error']);
    const edge = connectionToEdge(g, { source: 'run', target: 'alert', sourceHandle: 'port:error', targetHandle: 'in' });
    if (!edge) throw new Error('refused');
    g.edges.push(edge);
    const steps = graphToPlan(g).plan.steps;
    expect(steps.find((s) => s.id === 'run')?.onError).toBe('branch');
    expect(steps.find((s) => s.id === 'next')?.dependsOn).toEqual(['run:ok']);
    expect(steps.find((s) => s.id === 'alert')?.dependsOn).toEqual(['run:error']);
    // and the plan reads back into the same ports
    const back = planToGraph(graphToPlan(g).plan);
    expect(back.edges.filter((e) => e.source === 'run').map((e) => [e.target, e.sourceHandle]).sort()).toEqual([['alert', 'port:error'], ['next', 'port:ok']]);
  });

  it('leaving branch moves ok connections back to plain and drops the error port\'s connections, so no unknown port is left', () => {
    const g = plan();
    setOnError(g, 'run', 'branch');
    g.edges.push({ id: 'e-err', source: 'run', target: 'alert', sourceHandle: 'port:error' });
    setOnError(g, 'run', 'continue');
    const steps = graphToPlan(g).plan.steps;
    expect(steps.find((s) => s.id === 'run')?.onError).toBe('continue');
    expect(steps.find((s) => s.id === 'next')?.dependsOn).toEqual(['run']);
    expect(steps.find((s) => s.id === 'alert')?.dependsOn).toBeUndefined();
    setOnError(g, 'run', 'fail');
    expect(graphToPlan(g).plan.steps.find((s) => s.id === 'run')).not.toHaveProperty('onError');
  });

  it('a model step may branch too; conditions and groups are left alone', () => {
    const g = planToGraph({ steps: [{ id: 'm', instruction: 'x' }, { id: 'check', kind: 'condition', cases: [{ name: 'big', when: { all: [{ left: 1, op: 'gt', right: 0 }] } }] }] });
    setOnError(g, 'm', 'branch');
    setOnError(g, 'check', 'branch');
    expect(failurePorts(g.nodes.find((n) => n.id === 'm') as StepNode)).toEqual(['ok', 'error']);
    expect(graphToPlan(g).plan.steps.find((s) => s.id === 'check')).not.toHaveProperty('onError');
  });
});

describe('problems from the shared validator', () => {
  it('are shown on the node: a timeout out of range, retry on a command, an error connection from a step that does not branch', () => {
    const catalog = [entry('echo', 'read'), entry('execute_command', 'command')];
    const g = planToGraph({ steps: [{ id: 'run', tool: 'execute_command', arguments: {} }, { id: 'alert', tool: 'echo', arguments: {} }] });
    const run = g.nodes.find((n) => n.id === 'run') as StepNode;
    Object.assign(run.data, failurePatch({ onError: 'branch', timeoutSeconds: '7200', attempts: 3, delaySeconds: 1 }));
    g.edges.push({ id: 'e-err', source: 'run', target: 'alert', sourceHandle: 'port:error' });
    expect((diagnosticsByNode(diagnose(g, catalog)).get('run') ?? []).map((d) => d.code).sort()).toEqual(['retry_unsafe', 'step_timeout_range']);
    expect(diagnose(g, catalog).some((d) => d.code === 'step_unknown_dependency')).toBe(false);
    // the same connection from a step that fails the run names the port it lacks
    delete run.data.onError;
    expect(diagnose(g, catalog).find((d) => d.code === 'step_unknown_dependency')?.nodeId).toBe('alert');
  });
});
