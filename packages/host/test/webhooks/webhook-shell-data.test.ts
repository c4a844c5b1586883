import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A webhook delivery's body reaches `execute_command` as data (issue 38): a real host, a published
 * workflow run unattended in full-access by a real delivery over loopback, real bash. The
 * side-effect marks must never appear; the command prints the hostile text instead.
 */

let t: TestHost;
let marks: string;

beforeAll(async () => {
  t = await startTestHost();
  marks = mkdtempSync(join(tmpdir(), 'fengyu-marks-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(marks, { recursive: true, force: true });
});

const schema = { type: 'object', required: ['msg'], properties: { msg: { type: 'string' } } };

async function publish(command: string) {
  const def = await t.api('POST', '/api/workflows', { name: 'Shell', description: 'echoes', inputSchema: schema, plan: { steps: [{ id: 'say', tool: 'execute_command', arguments: { command } }] } });
  if (def.status !== 200) return def;
  return t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: def.body.revision });
}

async function deliverTo(workflowId: string, msg: string, settle = false): Promise<Record<string, any>> {
  const tr = await t.api('POST', `/api/workflows/${workflowId}/webhooks`, { permissionMode: 'full-access' });
  expect(tr.status, JSON.stringify(tr.body)).toBe(201);
  const res = await fetch(`${t.host.url}/api/workflow-hooks/${tr.body.trigger.id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': tr.body.secret },
    body: JSON.stringify({ msg }),
  });
  expect(res.status).toBe(202);
  const { taskId } = (await res.json()) as { taskId: string };
  // `settle`: until the run ends or stops at a gate (an unattended run's gate waits in the inbox)
  while (settle) {
    const task = (await t.api('GET', `/api/agent/tasks/${taskId}`)).body;
    if (['waiting', 'completed', 'failed', 'cancelled'].includes(task.state)) return task;
    await new Promise((r) => setTimeout(r, 25));
  }
  const out = await t.api('GET', `/api/agent/tasks/${taskId}/output?timeoutMs=30000`);
  expect(out.status).toBe(200);
  return out.body;
}

async function stepResult(runId: string): Promise<Record<string, any>> {
  const run = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
  return run.executions.find((s: { stepId: string }) => s.stepId === 'say').result;
}

describe('webhook values in a shell command', () => {
  it('echo {{inputs.msg}} echoes "a; touch MARK" and never runs it, unquoted or inside "…" or \'…\'', async () => {
    const cases: Array<[string, string]> = [
      ['echo {{inputs.msg}}', `a; touch ${join(marks, 'm1')}`],
      ['echo "{{inputs.msg}}"', `$(touch ${join(marks, 'm2')})\`touch ${join(marks, 'm3')}\``],
      ["echo '{{inputs.msg}}'", `'; touch ${join(marks, 'm4')}; '`],
      ['echo pre{{inputs.msg}}post', `\n touch ${join(marks, 'm5')} #`],
    ];
    for (const [command, msg] of cases) {
      const pub = await publish(command);
      expect(pub.status, JSON.stringify(pub.body)).toBe(200);
      const done = await deliverTo(pub.body.id, msg);
      expect(done.state, JSON.stringify(done)).toBe('completed');
      const result = await stepResult(done.runId);
      const printed = command.includes('pre') ? `pre${msg}post` : msg;
      expect(result.stdout).toBe(`${printed}\n`);
    }
    for (const m of ['m1', 'm2', 'm3', 'm4', 'm5']) expect(existsSync(join(marks, m)), m).toBe(false);
  });

  it('a placeholder where quoting cannot keep it data is refused when the workflow is saved', async () => {
    for (const command of ['echo `echo {{inputs.msg}}`', 'echo ${x:-{{inputs.msg}}}', 'echo $(( {{inputs.msg}} ))', 'cat <<EOF\n{{inputs.msg}}\nEOF']) {
      const res = await publish(command);
      expect(res.status, command).toBe(400);
      expect(JSON.stringify(res.body), command).toContain('ref_shell_context');
    }
  });

  it('the rendered line is still judged: a whole-value placeholder is one word, and the floor still asks', async () => {
    const pub = await publish('{{inputs.msg}}');
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
    for (const msg of [`touch ${join(marks, 'm6')}`, 'rm']) {
      // "touch /…/m6" is one program name (opaque); 'rm' is rm (the floor): both ask in full-access
      const done = await deliverTo(pub.body.id, msg, true);
      // the step stops at its gate (waiting in the inbox, or failed where no gate can open)
      expect(['waiting', 'failed']).toContain(done.state);
      const run = (await t.api('GET', `/api/agent/runs/${done.runId}`)).body;
      const audit = run.events.find((e: Record<string, unknown>) => e.type === 'audit' && e.kind === 'permission');
      expect(audit).toMatchObject({ decision: 'ask', source: 'floor' });
      expect(run.events.some((e: Record<string, unknown>) => e.type === 'step_start')).toBe(false);
      await t.api('POST', `/api/agent/tasks/${done.id}/kill`);
    }
    expect(existsSync(join(marks, 'm6'))).toBe(false);
  });
});
