import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachmentsOf, headerOf, type SmtpFixture, startDropProxy, startSmtp } from '../../../plugins/email/test/smtp-fixture';
import { invoiceRows, REGIONS, writeCsvAsXlsx, writeEmptySheet, writeInvoices } from '../../../plugins/excel/test/workbooks';
import { auto, startTestHost, type TestHost } from '../support/host';
import { officialBundleDirs } from './bundles';

/**
 * The headline scenario end to end: a real host with the bundled official plugins (real worker
 * processes), the "Excel split → batch email" template, an uploaded workbook with four regions,
 * plan approval, the approval gate at confirm_send, and a real SMTP server on loopback.
 */

const SECRET = 'office-Secret-42';
const MANAGERS = ['north@example.com', 'lead@example.com'];
let t: TestHost;
let smtp: SmtpFixture;
let work: string;
let workflowId: string;
const rows = invoiceRows(48);

const exec = (run: any, stepId: string) => run.executions.find((e: any) => e.stepId === stepId);

async function upload(path: string, name: string) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(readFileSync(path))]), name);
  const res = await fetch(`${t.host.url}/api/files`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
  expect(res.status).toBe(201);
  return res.json();
}

async function detail(runId: string) {
  return (await t.api('GET', `/api/agent/runs/${runId}`)).body;
}

/** A bare run of a literal plan, no approvals, to its end. */
async function runPlan(steps: unknown[]) {
  const res = await t.api('POST', '/api/agent/run', { goal: 'setup', workflow: { steps }, config: auto });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await t.stream(res.body.runId);
  return detail(res.body.runId);
}

async function startTemplateRun(book: string, inputs: Record<string, unknown>, config: Record<string, unknown>) {
  const ref = await upload(book, 'invoices.xlsx');
  const res = await t.api('POST', `/api/workflows/${workflowId}/run`, { inputs: { splitColumn: 'Region', recipients: 'managers', account: 'office', ...inputs }, files: [{ name: 'workbook', refs: [ref] }], config });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.runId as string;
}

async function runToEnd(book: string, inputs: Record<string, unknown> = {}) {
  const id = await startTemplateRun(book, inputs, auto);
  await t.stream(id);
  return detail(id);
}

const account = (id: string, port: number, secret: string) => ({
  id: `acct-${id}`,
  tool: 'email_account_save',
  arguments: { id, name: 'Office', from: 'office@example.com', host: '127.0.0.1', port, tls: 'none', user: 'office', secret },
});

beforeAll(async () => {
  const bundledPluginDirs = await officialBundleDirs();
  work = mkdtempSync(join(tmpdir(), 'fengyu-official-'));
  smtp = await startSmtp({ users: { office: SECRET } });
  t = await startTestHost({ bundledPluginDirs });
  const setup = await runPlan([account('office', smtp.port, SECRET), { id: 'tag', tool: 'email_tag_save', arguments: { name: 'managers', recipients: MANAGERS } }]);
  expect(setup.status, JSON.stringify(setup.executions)).toBe('completed');
  const wf = await t.api('POST', '/api/workflows', { templateId: 'excel-split-email' });
  expect(wf.status, JSON.stringify(wf.body)).toBe(200);
  workflowId = wf.body.id;
}, 240_000);
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('Excel split → batch email', () => {
  it("keeps the account's password sealed in the host's vault, never in the plugin's data", async () => {
    expect(t.host.ctx.vault.getInternal('default', 'plugin:fan.summer.email/account/office')).toBe(SECRET);
    const data = join(t.home, 'plugin-data', 'fan.summer.email');
    expect(readdirSync(data)).not.toContain('secrets.json');
    for (const f of readdirSync(data)) if (f.endsWith('.json')) expect(readFileSync(join(data, f), 'utf8')).not.toContain(SECRET);
    // the database keeps it sealed
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(t.home, 'fengyu.db'), { readonly: true });
    const hits: string[] = [];
    for (const { name } of db.prepare("select name from sqlite_master where type='table'").all() as Array<{ name: string }>) {
      for (const row of db.prepare(`select * from "${name}"`).all()) if (JSON.stringify(row).includes(SECRET)) hits.push(`${name}: ${JSON.stringify(row).slice(0, 300)}`);
    }
    db.close();
    expect(hits).toEqual([]);
  });

  it('offers accounts and recipient groups as live options', async () => {
    const accounts = await t.api('GET', `/api/workflows/${workflowId}/inputs/account/options`);
    expect(accounts.body.options.map((o: any) => o.value)).toEqual(['local-outbox', 'office']);
    expect(JSON.stringify(accounts.body)).not.toContain(SECRET);
    const groups = await t.api('GET', `/api/workflows/${workflowId}/inputs/recipients/options`);
    expect(groups.body.options).toEqual([{ value: 'managers', label: 'managers (2)' }]);
  });

  it('splits, pauses at confirm_send, and after approval delivers one message per region', async () => {
    const book = join(work, 'four-regions.xlsx');
    await writeInvoices(book, rows);
    const before = smtp.messages.length;
    const id = await startTemplateRun(book, {}, { permissionMode: 'approve-for-me', planApproval: true });
    await t.waitFor(id, 'plan_approval_requested');
    expect((await t.api('POST', `/api/agent/${id}/approve`)).status).toBe(200);
    const gate = await t.waitFor(id, "step_approval_requested").catch(async (e) => {
      throw new Error(`${e.message}: ${JSON.stringify((await detail(id)).executions)}`);
    });
    expect(gate.data.stepId).toBe('confirm');
    const paused = await detail(id);
    expect(paused.status).toBe('awaiting_step_approval');
    expect(exec(paused, 'send').result.preview).toHaveLength(4);
    expect(smtp.messages.length).toBe(before); // prepared, nothing sent
    expect((await t.api('POST', `/api/agent/${id}/approve`)).status).toBe(200);
    await t.stream(id);
    const run = await detail(id);
    expect(run.status, JSON.stringify(run.executions)).toBe('completed');
    expect(exec(run, 'confirm').result).toMatchObject({ success: true, sent: 4 });
    const got = smtp.messages.slice(before);
    expect(got).toHaveLength(4);
    for (const m of got) {
      expect(m.to).toEqual(MANAGERS);
      const [att] = attachmentsOf(m.raw);
      const region = /invoices-(\w+)\.xlsx/.exec(att?.filename ?? '')?.[1] as string;
      expect(REGIONS).toContain(region);
      expect(headerOf(m.raw, 'Subject')).toContain(region);
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.load(att?.content as never);
      const ws = wb.worksheets[0] as ExcelJS.Worksheet;
      expect(ws.getRow(1).values).toEqual([undefined, 'Invoice', 'Region', 'Customer', 'Amount', 'Date']);
      const sent = Array.from({ length: ws.rowCount - 1 }, (_, i) => ws.getRow(i + 2).getCell(1).value);
      expect(sent).toEqual(rows.filter((r) => r.region === region).map((r) => r.invoice));
      expect(ws.getColumn(4).width).toBe(12);
    }
    expect(new Set(got.map((m) => attachmentsOf(m.raw)[0]?.filename)).size).toBe(4);
  });

  it('cancelling at the gate sends nothing', async () => {
    const book = join(work, 'cancel.xlsx');
    await writeInvoices(book, rows);
    const before = smtp.messages.length;
    const id = await startTemplateRun(book, {}, { permissionMode: 'approve-for-me', planApproval: false });
    await t.waitFor(id, 'step_approval_requested');
    expect((await t.api('POST', `/api/agent/${id}/cancel`)).status).toBe(200);
    await t.stream(id);
    expect((await detail(id)).status).toBe('cancelled');
    expect(smtp.messages.length).toBe(before);
  });
});

describe('bad input', () => {
  it('fails clearly on a CSV renamed .xlsx, a missing split column and an empty sheet', async () => {
    const csv = join(work, 'fake.xlsx');
    await writeCsvAsXlsx(csv);
    let run = await runToEnd(csv);
    expect(run.status).toBe('failed');
    expect(exec(run, 'config').error).toMatch(/not an \.xlsx workbook/);
    const book = join(work, 'good.xlsx');
    await writeInvoices(book, rows);
    run = await runToEnd(book, { splitColumn: 'Regoin' });
    expect(run.status).toBe('failed');
    expect(exec(run, 'config').error).toMatch(/"Regoin" not found/);
    const empty = join(work, 'empty.xlsx');
    await writeEmptySheet(empty);
    run = await runToEnd(empty);
    expect(run.status).toBe('failed');
    expect(exec(run, 'config').error).toMatch(/is empty/);
    expect(exec(run, 'execute')?.status ?? 'not run').not.toBe('done');
  });

  it('reports a refused login without sending or leaking the secret', async () => {
    await runPlan([account('wrong', smtp.port, 'not-the-password')]);
    const book = join(work, 'login.xlsx');
    await writeInvoices(book, rows);
    const before = smtp.messages.length;
    const run = await runToEnd(book, { account: 'wrong' });
    expect(run.status).toBe('failed');
    expect(exec(run, 'confirm').error).toMatch(/refused the login/);
    expect(JSON.stringify(run)).not.toContain('not-the-password');
    expect(smtp.messages.length).toBe(before);
  });

  it('after a connection drop mid-batch names what was sent; confirming again sends only the rest', async () => {
    const proxy = await startDropProxy(smtp.port, 3);
    try {
      await runPlan([account('flaky', proxy.port, SECRET)]);
      const book = join(work, 'flaky.xlsx');
      await writeInvoices(book, rows);
      const before = smtp.messages.length;
      const run = await runToEnd(book, { account: 'flaky' });
      expect(run.status).toBe('failed');
      expect(exec(run, 'confirm').error).toMatch(/Sent: #1 East, #2 North\. Not sent: #3 South, #4 West/);
      expect(smtp.messages.length).toBe(before + 2);
      proxy.dropAtData = 0;
      const confirmationId = exec(run, 'send').result.confirmation.confirmationId;
      // Resume the failed run (the UI's Resume): finished steps are reused, confirm_send runs again.
      const last = Number((await t.stream(run.id)).at(-1)?.id);
      expect((await t.api('POST', `/api/agent/runs/${run.id}/resume`)).status).toBe(200);
      await t.stream(run.id, { lastEventId: last, until: (e) => e.type === 'plan_approval_requested' });
      expect((await t.api('POST', `/api/agent/${run.id}/approve`)).status).toBe(200);
      const resumed = await t.stream(run.id, { lastEventId: last });
      expect(resumed.filter((e) => e.type === 'step_start').map((e) => e.data.stepId)).toEqual(['confirm']);
      const again = await detail(run.id);
      expect(again.status, JSON.stringify(again.executions)).toBe('completed');
      expect(exec(again, 'confirm').result).toMatchObject({ success: true, sent: 2, alreadySent: 2 });
      const subjects = smtp.messages.slice(before).map((m) => /invoices-(\w+)/.exec(attachmentsOf(m.raw)[0]?.filename ?? '')?.[1]);
      expect(subjects).toEqual(['East', 'North', 'South', 'West']);
      const third = await runPlan([{ id: 'third', tool: 'confirm_send', arguments: { confirmationId } }]);
      expect(exec(third, 'third').result).toMatchObject({ success: true, sent: 0, alreadySent: 4 });
      expect(smtp.messages.length).toBe(before + 4);
    } finally {
      await proxy.close();
    }
  });
});
