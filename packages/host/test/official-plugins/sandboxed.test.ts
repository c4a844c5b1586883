import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachmentsOf, type SmtpFixture, startSmtp } from '../../../plugins/email/test/smtp-fixture';
import { invoiceRows, writeInvoices } from '../../../plugins/excel/test/workbooks';
import { auto, startTestHost, type TestHost } from '../support/host';
import { officialBundleDirs } from './bundles';

/**
 * The template on the host's sandbox backend (`auto`: bubblewrap where it works): the Excel
 * worker reads the upload and writes into the run's shared directory; the e-mail worker (which
 * declares `sandbox.network`) reads those parts and reaches the loopback SMTP server.
 */

let t: TestHost;
let smtp: SmtpFixture;
let work: string;

beforeAll(async () => {
  const bundledPluginDirs = await officialBundleDirs();
  work = mkdtempSync(join(tmpdir(), 'fengyu-official-sbx-'));
  smtp = await startSmtp();
  t = await startTestHost({ bundledPluginDirs, sandbox: 'auto' });
}, 240_000);
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('Excel split → batch email, sandboxed', () => {
  it('hands the parts from the Excel worker to the e-mail worker and sends them', async () => {
    const setup = await t.api('POST', '/api/agent/run', {
      goal: 'account',
      workflow: { steps: [{ id: 'a', tool: 'email_account_save', arguments: { id: 'plain', name: 'Plain', from: 'plain@example.com', host: '127.0.0.1', port: smtp.port, tls: 'none' } }] },
      config: auto,
    });
    await t.stream(setup.body.runId);
    const book = join(work, 'invoices.xlsx');
    await writeInvoices(book, invoiceRows(20));
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(readFileSync(book))]), 'invoices.xlsx');
    const ref = await (await fetch(`${t.host.url}/api/files`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form })).json();
    const wf = await t.api('POST', '/api/workflows', { templateId: 'excel-split-email' });
    const res = await t.api('POST', `/api/workflows/${wf.body.id}/run`, { inputs: { account: 'plain', recipients: 'team@example.com' }, files: [{ name: 'workbook', refs: [ref] }], config: auto });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await t.stream(res.body.runId);
    const run = (await t.api('GET', `/api/agent/runs/${res.body.runId}`)).body;
    expect(run.status, JSON.stringify(run.executions)).toBe('completed');
    expect(run.sandbox).toEqual(t.host.ctx.posture());
    expect(smtp.messages).toHaveLength(4);
    expect(smtp.messages.map((m) => attachmentsOf(m.raw)[0]?.filename).sort()).toEqual(['invoices-East.xlsx', 'invoices-North.xlsx', 'invoices-South.xlsx', 'invoices-West.xlsx']);
  });
});
