import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-log';
import { auto, startTestHost, type SseEvent, type TestHost } from '../support/host';

/**
 * Control flow end to end on a real host: conditions, ports, joins, skipped steps and
 * forEach loops, with `execute_command` leaving side-effect marks and pinned steps for data.
 */

let t: TestHost;
let dir: string;
/** Each commit item handed to the group commit, by run: its events' types and iterations. */
const commits: Array<{ runId: string; events: NewEvent[] }> = [];
beforeAll(async () => {
  t = await startTestHost();
  dir = mkdtempSync(join(tmpdir(), 'fengyu-flow-'));
  const log = t.host.ctx.events;
  const grouped = log.commitGrouped.bind(log);
  log.commitGrouped = ((runId: string, events: NewEvent[], ...rest: unknown[]) => {
    commits.push({ runId, events });
    return (grouped as (...a: unknown[]) => ReturnType<typeof grouped>)(runId, events, ...rest);
  }) as typeof log.commitGrouped;
});
afterAll(async () => t.close());

const run = async (workflow: unknown, config: Record<string, unknown> = auto) => {
  const res = await t.api('POST', '/api/agent/run', { goal: 'flow', config, workflow });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.runId as string;
};
const marks = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
const mark = (file: string, text: string) => ({ tool: 'execute_command', arguments: { command: `echo "${text}" >> '${file}'; echo "${text}"` } });
const completes = (events: SseEvent[], stepId: string) => events.filter((e) => e.type === 'step_complete' && e.data.stepId === stepId);

/** The headline scenario: the split parts, then for each part a manager mail above 1,000 rows, else the team. */
const headline = (file: string, concurrency = 2) => ({
  steps: [
    { id: 'split', tool: 'echo', arguments: { value: 'parts' }, pinned: { result: { files: [{ name: 'north', rows: 1500 }, { name: 'south', rows: 10 }, { name: 'east', rows: 2400 }] } } },
    {
      id: 'each',
      kind: 'forEach',
      items: '{{node.split.result.files}}',
      concurrency,
      dependsOn: ['split'],
      steps: [
        { id: 'check', kind: 'condition', cases: [{ name: 'big', when: { all: [{ left: '{{item.rows}}', op: 'gt', right: 1000 }] } }] },
        { id: 'manager', ...mark(file, 'manager {{item.name}} #{{index}}'), dependsOn: ['check:big'] },
        { id: 'team', ...mark(file, 'team {{item.name}} #{{index}}'), dependsOn: ['check:else'] },
        { id: 'sent', tool: 'echo', arguments: { value: '{{node.manager.result.stdout}}{{node.team.result.stdout}}' }, dependsOn: ['manager', 'team'], join: 'any' },
      ],
    },
    { id: 'report', tool: 'echo', arguments: { value: '{{node.each.result}}' }, dependsOn: ['each'] },
  ],
});

describe('forEach with a condition per item (the headline scenario)', () => {
  it('mails the big parts to the manager and the rest to the team, skipping the other branch each time', async () => {
    const file = join(dir, 'headline.txt');
    const runId = await run(headline(file));
    const events = await t.stream(runId);
    expect(events.at(-1)?.type, JSON.stringify(events.at(-1)?.data)).toBe('complete');
    expect(marks(file).sort()).toEqual(['manager east #2', 'manager north #0', 'team south #1']);
    // body events carry the iteration and the loop
    const skippedTeam = completes(events, 'team').filter((e) => e.data.status === 'skipped');
    expect(skippedTeam.map((e) => e.data.iteration).sort()).toEqual([0, 2]);
    expect(skippedTeam.every((e) => e.data.parentStepId === 'each')).toBe(true);
    expect(completes(events, 'manager').find((e) => e.data.status === 'skipped')?.data.iteration).toBe(1);
    const checks = completes(events, 'check');
    expect(checks.map((e) => [e.data.iteration, e.data.result.branch]).sort()).toEqual([
      [0, 'big'],
      [1, 'else'],
      [2, 'big'],
    ]);
    // progress per iteration, and the loop's result: each iteration's last body step result, in item order
    const progress = events.filter((e) => e.type === 'loop_progress');
    expect(progress.map((e) => e.data.done)).toEqual([1, 2, 3]);
    expect(events.find((e) => e.type === 'step_start' && e.data.stepId === 'each')?.data.total).toBe(3);
    const loop = completes(events, 'each')[0]?.data;
    expect(loop.result.map((r: { echoed: string }) => r.echoed.trim())).toEqual(['manager north #0', 'team south #1', 'manager east #2']);
    // the run detail and the SSE replay show the same
    const detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    const team = detail.executions.filter((e: { stepId: string }) => e.stepId === 'team');
    expect(team.map((e: { iteration: number; status: string; parentStepId: string }) => [e.iteration, e.status, e.parentStepId]).sort()).toEqual([
      [0, 'skipped', 'each'],
      [1, 'done', 'each'],
      [2, 'skipped', 'each'],
    ]);
    const replay = await t.stream(runId);
    expect(replay.filter((e) => e.type === 'step_complete' && e.data.status === 'skipped')).toHaveLength(3);
  });
});

describe('conditions, ports and joins at the top level', () => {
  it('takes else, skips the other branch and what hangs only on it, and a join any runs with "" for the skipped side', async () => {
    const file = join(dir, 'top.txt');
    const runId = await run({
      steps: [
        { id: 'sum', tool: 'echo', arguments: { value: 'x' }, pinned: { result: { total: 12, rows: [] } } },
        {
          id: 'check',
          kind: 'condition',
          dependsOn: ['sum'],
          cases: [
            { name: 'big', when: { all: [{ left: '{{node.sum.result.total}}', op: 'gt', right: 1000 }] } },
            { name: 'named', when: { any: [{ left: '{{node.sum.result.missing}}', op: 'exists' }, { left: 'abc', op: 'matches', right: '^z' }] } },
          ],
        },
        { id: 'escalate', ...mark(file, 'escalate'), dependsOn: ['check:big'] },
        { id: 'after', ...mark(file, 'after escalate'), dependsOn: ['escalate'] },
        { id: 'file', ...mark(file, 'file'), dependsOn: ['check:else'] },
        { id: 'report', tool: 'echo', arguments: { value: '[{{node.escalate.result.stdout}}]', whole: '{{node.escalate.result}}' }, dependsOn: ['after', 'file'], join: 'any' },
      ],
    });
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(marks(file)).toEqual(['file']);
    expect(completes(events, 'check')[0]?.data.result).toEqual({ branch: 'else' });
    expect(completes(events, 'escalate')[0]?.data.status).toBe('skipped');
    expect(completes(events, 'after')[0]?.data.status).toBe('skipped');
    const report = completes(events, 'report')[0]?.data;
    expect(report.status).toBe('done');
    expect(report.result.args).toEqual({ value: '[]', whole: null });
    const detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    expect(detail.executions.find((e: { stepId: string }) => e.stepId === 'after').status).toBe('skipped');
  });
});

describe('bad control flow is refused before anything runs', () => {
  it('answers one 400 listing every problem, localized, naming step and field', async () => {
    const file = join(dir, 'never.txt');
    const res = await t.api(
      'POST',
      '/api/agent/run',
      {
        config: auto,
        workflow: {
          steps: [
            { id: 'first', ...mark(file, 'ran') },
            { id: 'check', kind: 'condition', dependsOn: ['first'], cases: [{ name: 'big', when: { all: [{ left: 1, op: 'bigger', right: 2 }] } }] },
            { id: 'next', ...mark(file, 'ran {{item}}'), dependsOn: ['check:huge'] },
          ],
        },
      },
      { 'accept-language': 'zh-CN' },
    );
    expect(res.status).toBe(400);
    const details = res.body.error.details as { code: string; stepId: string; field: string; message: string }[];
    expect([...new Set(details.map((d) => d.code))].sort(), JSON.stringify(details)).toEqual(['condition_operator_unknown', 'ref_item_outside_loop', 'step_unknown_dependency']);
    const op = details.find((d) => d.code === 'condition_operator_unknown');
    expect(op).toMatchObject({ stepId: 'check', field: 'cases[0].when.all[0].op' });
    expect(op?.message).toContain('运算符');
    expect(existsSync(file)).toBe(false);
  });
});

describe('what a forEach writes per iteration', () => {
  const inIteration = (e: NewEvent, i: number) => (e as { iteration?: number }).iteration === i;
  const stored = async (runId: string) => (await t.host.ctx.db.selectFrom('run_events').select(['seq', 'type', 'data']).where('run_id', '=', runId).orderBy('seq').execute()).map((r) => ({ seq: r.seq, type: r.type, data: JSON.parse(r.data) }));

  it("writes an iteration's progress in the commit of its last body step's end (one commit item per iteration), in order, and the loop's array once", async () => {
    const items = ['a', '第"b"', 'c\\n', 'd', 'e', 'f'];
    const runId = await run({ steps: [{ id: 'each', kind: 'forEach', items, concurrency: 3, steps: [{ id: 'first', tool: 'echo', arguments: { value: '{{item}}' } }, { id: 'last', tool: 'echo', arguments: { value: { i: '{{index}}', v: '{{node.first.result}}' } }, dependsOn: ['first'] }] }] });
    const events = await t.stream(runId);
    expect(events.at(-1)?.type, JSON.stringify(events.at(-1)?.data)).toBe('complete');
    const mine = commits.filter((c) => c.runId === runId).map((c) => c.events);
    const progress = mine.filter((c) => c.some((e) => e.type === 'loop_progress'));
    // every iteration's progress rides with its last body step's end, right after it, never alone
    expect(progress).toHaveLength(items.length);
    for (const c of progress) {
      const at = c.findIndex((e) => e.type === 'loop_progress');
      const p = c[at] as NewEvent & { iteration: number };
      expect(c[at - 1]).toMatchObject({ type: 'step_complete', stepId: 'last', iteration: p.iteration, status: 'done' });
    }
    expect(mine.filter((c) => c.every((e) => e.type === 'loop_progress'))).toHaveLength(0);
    // the log (live, replayed and stored): done counts up, each after every event of its iteration
    const log = await stored(runId);
    expect(log.filter((e) => e.type === 'loop_progress').map((e) => e.data.done)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const p of log.filter((e) => e.type === 'loop_progress')) {
      const last = Math.max(...log.filter((e) => e.data.iteration === p.data.iteration && e.type !== 'loop_progress').map((e) => e.seq));
      expect(p.seq).toBeGreaterThan(last);
    }
    expect(events.map((e) => e.type)).toEqual(log.map((e) => e.type));
    const replay = await t.stream(runId);
    expect(replay.map((e) => [e.type, e.data.iteration])).toEqual(events.map((e) => [e.type, e.data.iteration]));
    // the loop's array: each iteration's last result in item order, the same in its event, its row and the run's result
    const loop = completes(events, 'each')[0]?.data;
    const lasts = items.map((_, i) => completes(events, 'last').find((e) => e.data.iteration === i)?.data.result);
    expect(loop.result).toEqual(lasts);
    const detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    expect(detail.executions.find((e: { stepId: string }) => e.stepId === 'each').result).toEqual(lasts);
    expect(detail.result).toEqual(lasts);
    expect(JSON.stringify(lasts)).toContain('第\\"b\\"');
  });

  it('writes the progress after the steps its last settle skipped, and null for an iteration whose last step was skipped', async () => {
    const runId = await run({
      steps: [
        {
          id: 'each',
          kind: 'forEach',
          items: [1, 2000, 3],
          steps: [
            { id: 'check', kind: 'condition', cases: [{ name: 'big', when: { all: [{ left: '{{item}}', op: 'gt', right: 1000 }] } }] },
            { id: 'work', tool: 'echo', arguments: { value: '{{item}}' }, dependsOn: ['check:else'] },
          ],
        },
      ],
    });
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    const log = await stored(runId);
    const at = (type: string, i: number, stepId?: string) => log.findIndex((e) => e.type === type && e.data.iteration === i && (!stepId || e.data.stepId === stepId));
    for (const i of [0, 1, 2]) expect(at('loop_progress', i)).toBeGreaterThan(at('step_complete', i, 'work'));
    expect(log[at('step_complete', 1, 'work')]?.data.status).toBe('skipped');
    const mine = commits.filter((c) => c.runId === runId).map((c) => c.events);
    // the skipped iteration's progress is its own commit item, after the skip's; the others ride with their end
    expect(mine.filter((c) => c.some((e) => e.type === 'loop_progress') && c.some((e) => e.type === 'step_complete' && inIteration(e, 0)))).toHaveLength(1);
    const loop = completes(events, 'each')[0]?.data.result;
    expect(loop[1]).toBeNull();
    expect(loop).toHaveLength(3);
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.result).toEqual(loop);
  });
});

describe('forEach limits, cancel and resume', () => {
  it('fails a loop whose items are not a list, or too many, before any iteration', async () => {
    const file = join(dir, 'limits.txt');
    const body = [{ id: 'm', ...mark(file, '{{item}}') }];
    const notList = await run({ steps: [{ id: 'src', tool: 'echo', arguments: { value: 1 }, pinned: { result: { n: 3 } } }, { id: 'loop', kind: 'forEach', items: '{{node.src.result.n}}', dependsOn: ['src'], steps: body }] });
    let events = await t.stream(notList);
    expect(events.at(-1)?.type).toBe('error');
    expect(completes(events, 'loop')[0]?.data.error).toContain('must be a list');
    const tooMany = await run({ steps: [{ id: 'loop', kind: 'forEach', items: [1, 2, 3], maxItems: 2, steps: [{ id: 'm2', ...mark(file, '{{item}}') }] }] });
    events = await t.stream(tooMany);
    expect(events.at(-1)?.type).toBe('error');
    expect(completes(events, 'loop')[0]?.data.error).toContain('at most 2');
    expect(existsSync(file)).toBe(false);
  });

  it('stops before the next iteration on cancel', async () => {
    const file = join(dir, 'cancel.txt');
    const runId = await run({ steps: [{ id: 'loop', kind: 'forEach', items: [1, 2, 3, 4, 5, 6], steps: [{ id: 'slow', tool: 'execute_command', arguments: { command: `echo {{item}} >> '${file}'; sleep 0.2` } }] }] });
    await t.waitFor(runId, 'loop_progress');
    expect((await t.api('POST', `/api/agent/${runId}/cancel`)).status).toBe(200);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('cancelled');
    const ran = marks(file).length;
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThan(6);
    expect(completes(events, 'loop')[0]?.data.status).toBe('failed');
  });

  it('resume reuses the finished iterations and runs the rest', async () => {
    const file = join(dir, 'resume.txt');
    const flag = join(dir, 'resume.flag');
    // item "c" takes the failing branch until the flag exists
    const plan = {
      steps: [
        {
          id: 'loop',
          kind: 'forEach',
          items: ['a', 'b', 'c'],
          steps: [
            { id: 'probe', tool: 'execute_command', arguments: { command: `[ "{{item}}" != c ] || [ -e '${flag}' ] && echo ok || echo no` } },
            { id: 'gate', kind: 'condition', dependsOn: ['probe'], cases: [{ name: 'bad', when: { all: [{ left: '{{node.probe.result.stdout}}', op: 'startsWith', right: 'no' }] } }] },
            { id: 'boom', tool: 'fail', dependsOn: ['gate:bad'] },
            { id: 'write', ...mark(file, 'wrote {{item}}'), dependsOn: ['gate:else'] },
          ],
        },
      ],
    };
    const runId = await run(plan);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('error');
    expect(marks(file)).toEqual(['wrote a', 'wrote b']);
    writeFileSync(flag, '');
    expect((await t.api('POST', `/api/agent/runs/${runId}/resume`)).status).toBe(200);
    await t.waitFor(runId, 'plan_approval_requested');
    expect((await t.api('POST', `/api/agent/${runId}/approve`, {})).status).toBe(200);
    let detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    for (let i = 0; i < 200 && ['running', 'awaiting_plan_approval'].includes(detail.status); i++) {
      await t.waitFor(runId, 'complete').catch(() => undefined);
      detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    }
    expect(detail.status).toBe('completed');
    expect(marks(file)).toEqual(['wrote a', 'wrote b', 'wrote c']);
    expect(detail.result.map((r: { stdout: string }) => r.stdout.trim())).toEqual(['wrote a', 'wrote b', 'wrote c']);
  });

  it('retry runs a new run that reuses the finished iterations (done or skipped) and runs only the rest', async () => {
    const file = join(dir, 'retry.txt');
    const flag = join(dir, 'retry.flag');
    const plan = {
      steps: [
        { id: 'list', tool: 'echo', arguments: { value: 'x' }, pinned: { result: ['a', 'skip', 'c'] } },
        {
          id: 'loop',
          kind: 'forEach',
          items: '{{node.list.result}}',
          dependsOn: ['list'],
          steps: [
            { id: 'which', kind: 'condition', cases: [{ name: 'skip', when: { all: [{ left: '{{item}}', op: 'eq', right: 'skip' }] } }] },
            { id: 'work', tool: 'execute_command', arguments: { command: `echo "work {{item}}" >> '${file}'; [ "{{item}}" != c ] || [ -e '${flag}' ]` }, dependsOn: ['which:else'] },
          ],
        },
      ],
    };
    const runId = await run(plan);
    const first = await t.stream(runId);
    expect(first.at(-1)?.type).toBe('error');
    expect(marks(file)).toEqual(['work a', 'work c']);
    writeFileSync(flag, '');
    const retried = await t.api('POST', `/api/agent/runs/${runId}/retry`, {});
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    const events = await t.stream(retried.body.runId);
    expect(events.at(-1)?.type, JSON.stringify(events.at(-1)?.data)).toBe('complete');
    // item "a" (done) and item "skip" (its work skipped) are not run again; only "c" is
    expect(marks(file)).toEqual(['work a', 'work c', 'work c']);
    const work = completes(events, 'work').map((e) => [e.data.iteration, e.data.status, e.data.reused ?? false]);
    expect(work.sort()).toEqual([[0, 'done', true], [1, 'skipped', false], [2, 'done', false]]);
    expect(completes(events, 'which').map((e) => [e.data.iteration, e.data.reused ?? false]).sort()).toEqual([[0, true], [1, true], [2, false]]);
    const steps = (await t.api('GET', `/api/agent/runs/${retried.body.runId}`)).body.executions as { stepId: string; iteration?: number; status: string }[];
    expect(steps.filter((x) => x.stepId === 'work').map((x) => [x.iteration, x.status]).sort()).toEqual([[0, 'done'], [1, 'skipped'], [2, 'done']]);
  });
});
