import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packPlugin } from '@fengyu/plugin-sdk/pack';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';
import { until } from '../tasks/helpers';

/**
 * The headline template end to end with the official plugins (packed and installed here, real
 * workers): create from the gallery, pick the account from the e-mail plugin, upload a workbook,
 * run — the shared output folder carries the split parts from Excel to E-mail — and release the
 * approval-gated send step.
 */

const PLUGINS = join(import.meta.dirname, '../../../plugins');
let t: TestHost;
let tmp: string;

async function workbook(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Invoices');
  ws.addRow(['Invoice', 'Region', 'Amount']);
  for (const [i, region] of ['North', 'South', 'North', 'East', 'South', 'North'].entries()) ws.addRow([`INV-${i + 1}`, region, 100 + i]);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'fengyu-tpl-'));
  const packed = await Promise.all(['excel', 'email'].map((p) => packPlugin(join(PLUGINS, p), join(tmp, `${p}.fyp`))));
  t = await startTestHost({ sandbox: 'auto' });
  for (const { file } of packed) {
    const res = await t.upload('/api/plugins', readFileSync(file), 'plugin.fyp');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}, 180_000);
afterAll(async () => {
  await t?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('template: Excel split → batch email', () => {
  it('creates, picks, runs, pauses at the send step and sends after approval', async () => {
    const gallery = (await t.api('GET', '/api/workflow-templates')).body.templates as Array<Record<string, any>>;
    const tpl = gallery.find((x) => x.id === 'excel-split-email');
    expect(tpl?.missingTools).toEqual([]);
    const created = await t.api('POST', '/api/workflows', { templateId: 'excel-split-email' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    expect(created.body.plan.steps.find((s: { id: string }) => s.id === 'confirm')).toMatchObject({ tool: 'confirm_send', requiresApproval: true });

    const accounts = await t.api('GET', `/api/workflows/${id}/inputs/account/options`);
    expect(accounts.status, JSON.stringify(accounts.body)).toBe(200);
    expect(accounts.body.options.map((o: { value: string }) => o.value)).toContain('local-outbox');

    const ref = await t.upload('/api/files', await workbook(), 'invoices.xlsx');
    expect(ref.status).toBe(201);
    const started = await t.api('POST', `/api/workflows/${id}/run`, {
      inputs: { splitColumn: 'Region', account: 'local-outbox', recipients: 'team@example.com' },
      files: [{ name: 'workbook', refs: [ref.body] }],
      config: { permissionMode: 'approve-for-me' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const runId = started.body.runId as string;
    const gate = await t.waitFor(runId, 'step_approval_requested');
    expect(gate.data.stepId).toBe('confirm');
    expect(typeof gate.data.arguments.confirmationId).toBe('string');
    expect((await t.api('POST', `/api/agent/${runId}/approve`)).status).toBe(200);
    const events = await t.stream(runId);
    const run = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    expect(run.status, JSON.stringify(events.at(-1)?.data)).toBe('completed');
    const exec = (s: string) => run.executions.find((e: { stepId: string }) => e.stepId === s);
    const parts = exec('execute').result.files as Array<{ path: string; value: string }>;
    expect(parts.map((p) => p.value).sort()).toEqual(['East', 'North', 'South']);
    for (const p of parts) expect(p.path).toContain(join('runs', runId, 'shared', 'output'));
    expect(exec('send').result.confirmation.confirmationId).toBe(gate.data.arguments.confirmationId);
    expect(exec('confirm').status).toBe('done');
  });
});

describe('template: Notify me when a workflow fails', () => {
  it('is a valid error workflow; a failing run starts it and it writes the notice to the outbox as .eml', async () => {
    const gallery = (await t.api('GET', '/api/workflow-templates')).body.templates as Array<Record<string, any>>;
    expect(gallery.find((x) => x.id === 'notify-on-failure')?.missingTools).toEqual([]);
    const created = await t.api('POST', '/api/workflows', { templateId: 'notify-on-failure' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const notify = created.body.id as string;
    expect((await t.api('POST', `/api/workflows/${notify}/publish`, { revision: created.body.revision })).status).toBe(200);
    // the setting accepts it: published, with an object input failedRun
    const job = await t.api('POST', '/api/workflows', { name: 'Nightly import', plan: { steps: [{ id: 'load', tool: 'execute_command', arguments: { command: "echo 'no route to db.internal' >&2; exit 2" } }] }, errorWorkflowId: notify });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expect((await t.api('POST', `/api/workflows/${job.body.id}/publish`, { revision: job.body.revision })).status).toBe(200);
    const started = await t.api('POST', `/api/workflows/${job.body.id}/run`, { version: 'published', config: { permissionMode: 'full-access' } });
    const runId = started.body.runId as string;
    expect((await t.stream(runId)).at(-1)?.type).toBe('error');
    const ew = await until(async () => (await t.api('GET', `/api/agent/runs/${runId}`)).body.errorWorkflow?.runId, 'the error workflow to start');
    expect((await t.stream(ew)).at(-1)?.type).toBe('complete');
    const run = (await t.api('GET', `/api/agent/runs/${ew}`)).body;
    const sent = run.executions.find((e: { stepId: string }) => e.stepId === 'send').result;
    expect(sent).toMatchObject({ success: true, sent: 1, accountId: 'local-outbox' });
    const eml = readFileSync(sent.messages[0].file.path, 'utf8');
    expect(eml).toContain('Subject: A workflow run failed: Nightly import');
    expect(eml).toContain('me@example.com');
    expect(eml).toMatch(/command_exit_nonzero/);
    expect(eml).toContain('no route to db.internal');
    expect(eml).toContain(runId);
    expect(eml).toContain('failed-run.txt');
  });
});
