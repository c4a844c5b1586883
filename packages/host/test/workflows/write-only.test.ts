import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * A value typed into a write-only argument (the test tool `login`'s `password`, declared
 * `writeOnly` like the e-mail plugin's `secret`) is never kept by a workflow: the plan and the
 * canvas graph store the marker, GET shows it, the database holds no clear value; a whole
 * reference (`{{inputs.pw}}`) is kept and fills the value at run time; a step left with the
 * marker does not send the marker as the password.
 */

const SECRET = 'hunter2-typed-into-a-step';
let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(() => t?.close());

function dbText(): string {
  const db = new Database(join(t.home, 'fengyu.db'), { readonly: true });
  try {
    return JSON.stringify(db.prepare('select * from workflows').all()) + JSON.stringify(db.prepare('select * from workflow_versions').all());
  } finally {
    db.close();
  }
}

describe('write-only arguments in workflows', () => {
  it('are stored and returned as [redacted], in the plan and in the graph', async () => {
    const created = await t.api('POST', '/api/workflows', { name: 'Login', plan: { steps: [{ id: 'in', tool: 'login', arguments: { user: 'me', password: SECRET } }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(JSON.stringify(created.body)).not.toContain(SECRET);
    const got = await t.api('GET', `/api/workflows/${created.body.id}`);
    expect(got.body.plan.steps[0].arguments).toEqual({ user: 'me', password: '[redacted]' });

    // the canvas saves its graph: a password typed into the node is sealed there too
    const graph = got.body.graph;
    const node = graph.nodes.find((n: { type: string }) => n.type === 'tool');
    node.data.arguments = { user: 'me', password: SECRET };
    const saved = await t.api('PUT', `/api/workflows/${created.body.id}`, { revision: got.body.revision, graph, plan: { steps: [{ id: 'in', tool: 'login', arguments: { user: 'me', password: SECRET } }] } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(JSON.stringify(saved.body)).not.toContain(SECRET);
    expect((await t.api('POST', `/api/workflows/${created.body.id}/publish`, { revision: saved.body.revision })).status).toBe(200);
    expect(dbText()).not.toContain(SECRET);
    expect(dbText()).toContain('[redacted]');

    // the marker is not sent as the password: the tool gets no password ('[redacted]' has 10 characters)
    const run = await t.api('POST', '/api/agent/run', { goal: 'g', config: auto, workflow: (await t.api('GET', `/api/workflows/${created.body.id}`)).body.plan });
    await t.stream(run.body.runId);
    const detail = (await t.api('GET', `/api/agent/runs/${run.body.runId}`)).body;
    expect(detail.result.passwordLength).toBe('undefined'.length);
  });

  it('keep a whole reference, which fills the value at run time', async () => {
    const created = await t.api('POST', '/api/workflows', {
      name: 'Login by input',
      inputSchema: { type: 'object', required: ['pw'], properties: { pw: { type: 'string' } } },
      plan: { steps: [{ id: 'in', tool: 'login', arguments: { user: 'me', password: '{{inputs.pw}}' } }] },
    });
    expect(created.body.plan.steps[0].arguments.password).toBe('{{inputs.pw}}');
    await t.api('POST', `/api/workflows/${created.body.id}/publish`, { revision: created.body.revision });
    const run = await t.api('POST', `/api/workflows/${created.body.id}/run`, { inputs: { pw: 'given-at-run-time' }, config: auto });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    await t.stream(run.body.runId);
    const detail = (await t.api('GET', `/api/agent/runs/${run.body.runId}`)).body;
    expect(detail.status).toBe('completed');
    expect(detail.result.passwordLength).toBe('given-at-run-time'.length);
  });
});
