import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** The schedule API on a real host: shapes, defaults, bad input, limits, the unattended check, cascades. */

let t: TestHost;

async function publishedWorkflow(plan: unknown, inputSchema: unknown = { type: 'object', properties: {} }): Promise<string> {
  const made = await t.api('POST', '/api/workflows', { name: 'Scheduled', inputSchema, plan });
  expect(made.status).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  expect(pub.status).toBe(200);
  return made.body.id;
}

const readPlan = { steps: [{ id: 'a', tool: 'echo', arguments: { text: '{{inputs.who}}' } }] };
const writePlan = { steps: [{ id: 'a', tool: 'echo', arguments: { text: 'hi' } }, { id: 'b', tool: 'write_note', arguments: { text: 'x' }, dependsOn: ['a'] }] };
const whoSchema = { type: 'object', properties: { who: { type: 'string' }, n: { type: 'integer' } }, required: ['who'] };

let readWf: string;
let writeWf: string;

beforeAll(async () => {
  t = await startTestHost();
  readWf = await publishedWorkflow(readPlan, whoSchema);
  writeWf = await publishedWorkflow(writePlan);
});

afterAll(async () => {
  await t.close();
});

describe('schedules API', () => {
  it('creates with the defaults (daily 09:00, host zone) and answers 201 with the schedule', async () => {
    const res = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'ada' }, permissionMode: 'ask' });
    expect(res.status).toBe(201);
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(res.body).toMatchObject({
      workflowId: readWf,
      recurrence: { kind: 'daily', time: '09:00', timeZone: zone },
      permissionMode: 'ask',
      inputs: { who: 'ada' },
      triggerCount: 0,
      missedFires: 0,
      state: 'active',
    });
    expect(res.body.id).toMatch(/^sch_/);
    expect(Date.parse(res.body.nextRunAt)).toBeGreaterThan(Date.parse(res.body.createdAt));
    expect(res.body.expiresAt).toBeUndefined();
    const one = await t.api('GET', `/api/agent/schedules/${res.body.id}`);
    expect(one.body).toEqual(res.body);
    const list = await t.api('GET', '/api/agent/schedules');
    expect(list.body.items.map((s: { id: string }) => s.id)).toContain(res.body.id);
    const del = await t.api('DELETE', `/api/agent/schedules/${res.body.id}`);
    expect(del.status).toBe(200);
    expect((await t.api('GET', `/api/agent/schedules/${res.body.id}`)).status).toBe(404);
    expect((await t.api('DELETE', `/api/agent/schedules/${res.body.id}`)).status).toBe(404);
  });

  it('interval schedules show their expiry; weekly and monthly keep their fields', async () => {
    const iv = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'a' }, permissionMode: 'full-access', recurrence: { kind: 'interval', everySeconds: 3600 } });
    expect(iv.status).toBe(201);
    expect(Date.parse(iv.body.expiresAt) - Date.parse(iv.body.createdAt)).toBe(7 * 86400_000);
    expect(Date.parse(iv.body.nextRunAt) - Date.parse(iv.body.createdAt)).toBe(3600_000);
    const wk = await t.api('POST', '/api/agent/schedules', {
      workflowId: readWf,
      inputs: { who: 'a' },
      permissionMode: 'ask',
      recurrence: { kind: 'weekly', time: '7:05', timeZone: 'europe/berlin', weekdays: [5, 1, 1] },
    });
    expect(wk.status).toBe(201);
    expect(wk.body.recurrence).toEqual({ kind: 'weekly', time: '07:05', timeZone: 'Europe/Berlin', weekdays: [1, 5] });
    const mo = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'a' }, permissionMode: 'ask', recurrence: { kind: 'monthly', time: '23:30', timeZone: 'Asia/Shanghai', day: 'last' } });
    expect(mo.status).toBe(201);
    for (const id of [iv.body.id, wk.body.id, mo.body.id]) await t.api('DELETE', `/api/agent/schedules/${id}`);
  });

  it('refuses bad input with a localized message naming the field, and creates nothing', async () => {
    const before = (await t.api('GET', '/api/agent/schedules')).body.items.length;
    const base = { workflowId: readWf, inputs: { who: 'a' }, permissionMode: 'ask' };
    const cases: Array<[unknown, string, string]> = [
      [{ ...base, recurrence: { kind: 'daily', time: '09:00', timeZone: 'Mars/Olympus' } }, 'schedule_time_zone_invalid', 'recurrence.timeZone'],
      [{ ...base, recurrence: { kind: 'daily', time: '25:00' } }, 'schedule_time_invalid', 'recurrence.time'],
      [{ ...base, recurrence: { kind: 'weekly', weekdays: [0] } }, 'schedule_weekdays_invalid', 'recurrence.weekdays'],
      [{ ...base, recurrence: { kind: 'weekly', weekdays: [8] } }, 'schedule_weekdays_invalid', 'recurrence.weekdays'],
      [{ ...base, recurrence: { kind: 'weekly', weekdays: [] } }, 'schedule_weekdays_invalid', 'recurrence.weekdays'],
      [{ ...base, recurrence: { kind: 'monthly', day: 32 } }, 'schedule_day_invalid', 'recurrence.day'],
      [{ ...base, recurrence: { kind: 'monthly', day: 0 } }, 'schedule_day_invalid', 'recurrence.day'],
      [{ ...base, recurrence: { kind: 'interval', everySeconds: 59 } }, 'schedule_seconds_invalid', 'recurrence.everySeconds'],
      [{ ...base, recurrence: { kind: 'interval', everySeconds: '600' } }, 'schedule_seconds_invalid', 'recurrence.everySeconds'],
      [{ ...base, recurrence: { kind: 'once', delaySeconds: 10 } }, 'schedule_seconds_invalid', 'recurrence.delaySeconds'],
      [{ ...base, recurrence: { kind: 'hourly' } }, 'schedule_recurrence_invalid', 'recurrence.kind'],
      [{ ...base, recurrence: { kind: 'daily', timezone: 'UTC' } }, 'schedule_field_unknown', 'recurrence.timezone'],
      [{ ...base, permissionMode: undefined }, 'schedule_permission_mode_invalid', 'permissionMode'],
      [{ ...base, permissionMode: 'yolo' }, 'schedule_permission_mode_invalid', 'permissionMode'],
      [{ ...base, workflowId: undefined }, 'schedule_workflow_id_invalid', 'workflowId'],
      [{ ...base, inputs: [1] }, 'schedule_inputs_invalid', 'inputs'],
      [{ ...base, runImmediately: 'yes' }, 'schedule_run_immediately_invalid', 'runImmediately'],
      [{ ...base, recurring: 'no' }, 'schedule_recurring_invalid', 'recurring'],
      [{ ...base, recurring: false, recurrence: { kind: 'weekly', weekdays: [1] } }, 'schedule_recurring_conflict', 'recurring'],
      [{ ...base, recurring: true, recurrence: { kind: 'once', delaySeconds: 600 } }, 'schedule_recurring_conflict', 'recurring'],
      [{ ...base, inputs: {} }, 'workflow_inputs_invalid', 'inputs.who'],
      [{ ...base, inputs: { who: 'a', n: 'many' } }, 'workflow_inputs_invalid', 'inputs.n'],
    ];
    for (const [body, code, field] of cases) {
      const res = await t.api('POST', '/api/agent/schedules', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toContain(field);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      const zh = await t.api('POST', '/api/agent/schedules', body, { 'accept-language': 'zh-CN' });
      expect(zh.body.error.message).toContain(field);
      expect(zh.body.error.message).not.toBe(res.body.error.message);
    }
    expect((await t.api('GET', '/api/agent/schedules')).body.items.length).toBe(before);
  });

  it('takes the seed\'s one-shot form: an interval with recurring: false fires once after that delay', async () => {
    const res = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'once' }, permissionMode: 'ask', recurring: false, recurrence: { kind: 'interval', everySeconds: 900 } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.recurrence).toEqual({ kind: 'once', delaySeconds: 900 });
    await t.api('DELETE', `/api/agent/schedules/${res.body.id}`);
  });

  it('an unknown workflow is a 404; a draft is a 400', async () => {
    const unknown = await t.api('POST', '/api/agent/schedules', { workflowId: 'nope', permissionMode: 'ask' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('workflow_not_found');
    const draft = await t.api('POST', '/api/workflows', { name: 'Draft', plan: readPlan, inputSchema: whoSchema });
    const res = await t.api('POST', '/api/agent/schedules', { workflowId: draft.body.id, inputs: { who: 'a' }, permissionMode: 'full-access' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('schedule_workflow_draft');
    expect(res.body.error.message).toContain('workflowId');
  });

  it('under ask, an uncovered write step is refused with guidance; an allow rule or a deliberate mode lets it through', async () => {
    const res = await t.api('POST', '/api/agent/schedules', { workflowId: writeWf, permissionMode: 'ask' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('schedule_needs_unattended_mode');
    expect(res.body.error.message).toContain('"b"');
    expect(res.body.error.message).toContain('approve-for-me');
    expect(res.body.error.details[0]).toMatchObject({ stepId: 'b', code: 'unattended_step_gated' });
    const zh = await t.api('POST', '/api/agent/schedules', { workflowId: writeWf, permissionMode: 'ask' }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toContain('代我批准');

    const approve = await t.api('POST', '/api/agent/schedules', { workflowId: writeWf, permissionMode: 'approve-for-me' });
    expect(approve.status).toBe(201);
    await t.api('DELETE', `/api/agent/schedules/${approve.body.id}`);

    const patched = await t.api('PATCH', '/api/settings', { permissions: { allow: ['Tool(write_note)'] } });
    expect(patched.status).toBe(200);
    const covered = await t.api('POST', '/api/agent/schedules', { workflowId: writeWf, permissionMode: 'ask' });
    expect(covered.status).toBe(201);
    await t.api('DELETE', `/api/agent/schedules/${covered.body.id}`);
    await t.api('PATCH', '/api/settings', { permissions: { allow: [] } });
  });

  it('at most 50 active or paused schedules per owner; other owners are separate and cannot see them', async () => {
    const ids: string[] = [];
    const existing = (await t.api('GET', '/api/agent/schedules?limit=100')).body.items.filter((s: { state: string }) => s.state === 'active' || s.state === 'paused').length;
    for (let i = existing; i < 50; i += 1) {
      const r = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: `${i}` }, permissionMode: 'ask', recurrence: { kind: 'interval', everySeconds: 3600 } });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const over = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'x' }, permissionMode: 'ask' });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe('schedule_limit');
    expect(over.body.error.message).toContain('50');

    const page1 = await t.api('GET', '/api/agent/schedules?limit=20');
    expect(page1.body.items.length).toBe(20);
    const page2 = await t.api('GET', `/api/agent/schedules?limit=20&cursor=${page1.body.nextCursor}`);
    expect(page2.body.items.map((s: { id: string }) => s.id)).not.toContain(page1.body.items[0].id);

    const bob = await t.api('POST', '/api/owners', { name: 'bob' });
    const asBob = { 'x-fengyu-token': bob.body.token };
    expect((await t.api('GET', `/api/agent/schedules/${ids[0]}`, undefined, asBob)).status).toBe(404);
    expect((await t.api('DELETE', `/api/agent/schedules/${ids[0]}`, undefined, asBob)).status).toBe(404);
    expect((await t.api('GET', '/api/agent/schedules', undefined, asBob)).body.items).toEqual([]);
    for (const id of ids) await t.api('DELETE', `/api/agent/schedules/${id}`);
    expect((await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'x' }, permissionMode: 'ask' })).status).toBe(201);
  });

  it('deleting a workflow disables its schedules (in the delete transaction)', async () => {
    const wf = await publishedWorkflow(readPlan, whoSchema);
    const a = await t.api('POST', '/api/agent/schedules', { workflowId: wf, inputs: { who: 'a' }, permissionMode: 'ask' });
    const b = await t.api('POST', '/api/agent/schedules', { workflowId: wf, inputs: { who: 'b' }, permissionMode: 'ask', recurrence: { kind: 'interval', everySeconds: 60 } });
    const other = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'c' }, permissionMode: 'ask' });
    expect((await t.api('DELETE', `/api/workflows/${wf}`)).status).toBe(200);
    for (const id of [a.body.id, b.body.id]) {
      const s = await t.api('GET', `/api/agent/schedules/${id}`);
      expect(s.body).toMatchObject({ state: 'disabled', nextRunAt: null });
      expect(s.body.lastError.code).toBe('schedule_workflow_deleted');
    }
    expect((await t.api('GET', `/api/agent/schedules/${other.body.id}`)).body.state).toBe('active');
  });

  it('preview: the next instants strictly after "from", DST rules applied', async () => {
    const res = await t.api('POST', '/api/agent/schedules/preview', {
      recurrence: { kind: 'daily', time: '02:30', timeZone: 'America/New_York' },
      from: '2026-03-07T12:00:00Z',
      count: 3,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ times: ['2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z', '2026-03-10T06:30:00.000Z'] });
    const iv = await t.api('POST', '/api/agent/schedules/preview', { recurrence: { kind: 'interval', everySeconds: 60 }, from: '2026-01-01T00:00:00Z', count: 2 });
    expect(iv.body.times).toEqual(['2026-01-01T00:01:00.000Z', '2026-01-01T00:02:00.000Z']);
    const dflt = await t.api('POST', '/api/agent/schedules/preview', {});
    expect(dflt.body.times.length).toBe(10);
    for (const [body, field] of [
      [{ count: 51 }, 'count'],
      [{ count: 0 }, 'count'],
      [{ from: '2026-01-01T00:00:00' }, 'from'],
      // the largest instant a date can hold, and the smallest: a 400 naming "from", never a 500
      [{ from: '+275760-09-13T00:00:00Z' }, 'from'],
      [{ from: '-271821-04-20T00:00:00Z', recurrence: { kind: 'interval', everySeconds: 60 } }, 'from'],
      [{ from: '+010000-01-01T00:00:00Z' }, 'from'],
      [{ recurrence: { kind: 'daily', time: '25:00' } }, 'recurrence.time'],
    ] as const) {
      const bad = await t.api('POST', '/api/agent/schedules/preview', body);
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain(field);
    }
  });

  it('task_schedule is in the catalog with effect external', async () => {
    const tools = await t.api('GET', '/api/agent/tools');
    const entries = (tools.body.tools ?? tools.body) as Array<{ name: string; effect: string }>;
    expect(entries.find((e) => e.name === 'task_schedule')).toMatchObject({ effect: 'external' });
  });
});

describe('fires on a real host (the real task executor)', () => {
  it('runImmediately submits an ordinary batch workflow-schedule task that runs the workflow', async () => {
    const res = await t.api('POST', '/api/agent/schedules', { workflowId: readWf, inputs: { who: 'now' }, permissionMode: 'ask', runImmediately: true, recurrence: { kind: 'daily', time: '09:00', timeZone: 'UTC' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ triggerCount: 1, missedFires: 0, state: 'active' });
    expect(res.body.lastTaskId).toBeTruthy();
    expect(Date.parse(res.body.nextRunAt)).toBeGreaterThan(Date.now());
    const done = await t.api('GET', `/api/agent/tasks/${res.body.lastTaskId}/output?timeoutMs=30000`);
    expect(done.body).toMatchObject({ kind: 'workflow-schedule', priority: 'batch', scheduleId: res.body.id, workflowId: readWf, state: 'completed' });
    expect(done.body.output.text).toContain('now');
    // deleting the schedule stops future fires; the submitted task stays
    await t.api('DELETE', `/api/agent/schedules/${res.body.id}`);
    expect((await t.api('GET', `/api/agent/tasks/${res.body.lastTaskId}`)).body.state).toBe('completed');
  });

  it('the task_schedule tool creates a schedule with the same checks', async () => {
    const run = await t.api('POST', '/api/agent/run', {
      workflow: {
        steps: [
          { id: 'ok', tool: 'task_schedule', arguments: { workflowId: readWf, inputs: { who: 'tool' }, permissionMode: 'full-access', recurrence: { kind: 'once', delaySeconds: 600 } } },
        ],
      },
      config: { planApproval: false, permissionMode: 'full-access' },
    });
    expect(run.status).toBe(200);
    await t.waitFor(run.body.runId, 'complete');
    const detail = (await t.api('GET', `/api/agent/runs/${run.body.runId}`)).body;
    const created = detail.result.schedule;
    expect(detail.result.scheduleId).toBe(created.id);
    expect(created).toMatchObject({ recurrence: { kind: 'once', delaySeconds: 600 }, state: 'active', inputs: { who: 'tool' } });
    expect((await t.api('GET', `/api/agent/schedules/${created.id}`)).status).toBe(200);
    await t.api('DELETE', `/api/agent/schedules/${created.id}`);

    const bad = await t.api('POST', '/api/agent/run', {
      workflow: { steps: [{ id: 'bad', tool: 'task_schedule', arguments: { workflowId: writeWf, permissionMode: 'ask' } }] },
      config: { planApproval: false, permissionMode: 'full-access' },
    });
    const events = await t.stream(bad.body.runId);
    expect(events.at(-1)?.type).toBe('error');
    expect(JSON.stringify(events.at(-1))).toContain('Nobody can answer an approval at the scheduled time');
  });
});

describe('posture across restarts', () => {
  it('a schedule created sandboxed pauses when the host runs unsandboxed and resumes when the sandbox is back', async () => {
    const a = await startTestHost({ sandbox: 'auto' });
    const home = a.home;
    expect((await a.api('GET', '/api/health')).body.posture.mode).toBe('sandboxed');
    const made = await a.api('POST', '/api/workflows', { name: 'p', plan: readPlan, inputSchema: whoSchema });
    await a.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
    const s = await a.api('POST', '/api/agent/schedules', { workflowId: made.body.id, inputs: { who: 'x' }, permissionMode: 'full-access', recurrence: { kind: 'interval', everySeconds: 600 } });
    expect(s.status).toBe(201);
    await a.host.close();

    const b = await startTestHost({ keepHome: home, sandbox: 'off' });
    expect((await b.api('GET', `/api/agent/schedules/${s.body.id}`)).body).toMatchObject({ state: 'paused', pausedReason: 'sandbox_weakened' });
    // schedules created while unsandboxed are not affected
    const plain = await b.api('POST', '/api/agent/schedules', { workflowId: made.body.id, inputs: { who: 'y' }, permissionMode: 'full-access', recurrence: { kind: 'interval', everySeconds: 600 } });
    expect(plain.body.state).toBe('active');
    await b.host.close();

    const c = await startTestHost({ keepHome: home, sandbox: 'auto' });
    const resumed = (await c.api('GET', `/api/agent/schedules/${s.body.id}`)).body;
    expect(resumed.state).toBe('active');
    expect(resumed.pausedReason).toBeUndefined();
    expect((await c.api('GET', `/api/agent/schedules/${plain.body.id}`)).body.state).toBe('active');
    await c.close();
  });
});
