import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpFixture, headerOf, startSmtp } from '../../../plugins/email/test/smtp-fixture';
import { freshBundle } from '../official-plugins/bundles';
import { startTestHost, type TestHost } from '../support/host';
import { until } from '../tasks/helpers';

/**
 * E-mail per new inbox item, through the real e-mail plugin to a real SMTP server on loopback:
 * one message per item with its title, workflow, trigger and a link to the Inbox page — never the
 * token; nothing without `notifications.email`; a bad setting is a 400 naming it.
 */

const SECRET = 'smtp-secret-4711';
let t: TestHost;
let smtp: SmtpFixture;
let flow: string;

async function waitingItem(): Promise<{ id: string; runId: string }> {
  const res = await t.api('POST', '/api/agent/tasks', { workflowId: flow, permissionMode: 'ask' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const runId = await until(async () => {
    const s = (await t.api('GET', `/api/agent/tasks/${res.body.id}`)).body;
    return s.state === 'waiting' ? (s.runId as string) : undefined;
  }, 'the task to wait');
  const item = await until(async () => ((await t.api('GET', '/api/inbox')).body.items as Array<{ id: string; runId: string }>).find((i) => i.runId === runId), 'the item');
  return item;
}

beforeAll(async () => {
  smtp = await startSmtp({ users: { office: SECRET } });
  t = await startTestHost({ bundledPluginDirs: [await freshBundle('email')] });
  const acct = await t.api('POST', '/api/agent/run', {
    workflow: { steps: [{ id: 'acct', tool: 'email_account_save', arguments: { id: 'office', name: 'FengYu', from: 'fengyu@example.com', host: '127.0.0.1', port: smtp.port, tls: 'none', user: 'office', secret: SECRET } }] },
    config: { permissionMode: 'full-access', planApproval: false },
  });
  const events = await t.stream(acct.body.runId);
  expect(events.at(-1)?.type).toBe('complete');
  const made = await t.api('POST', '/api/workflows', { name: 'Quarterly notes', inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'note', title: 'Write the quarterly note', tool: 'write_note', arguments: { text: 'q' } }] } });
  await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  flow = made.body.id;
}, 240_000);

afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

describe('inbox e-mail', () => {
  it('sends nothing while notifications.email is not set', async () => {
    const before = smtp.messages.length;
    await waitingItem();
    await Promise.all([...t.host.ctx.inbox.sending]);
    expect(smtp.messages.length).toBe(before);
  });

  it('refuses a setting without a valid address, naming it', async () => {
    const bad = await t.api('PATCH', '/api/settings', { notifications: { email: { accountId: 'office', to: 'not-an-address' } } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error)).toContain('notifications');
  });

  it('sends one message per new item: title, workflow, trigger and the inbox link without the token', async () => {
    const ok = await t.api('PATCH', '/api/settings', { notifications: { email: { accountId: 'office', to: 'me@example.com' } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const before = smtp.messages.length;
    const item = await waitingItem();
    await until(() => smtp.messages.length > before, 'the e-mail');
    await Promise.all([...t.host.ctx.inbox.sending]);
    expect(smtp.messages.length).toBe(before + 1);
    const mail = smtp.messages.at(-1);
    expect(mail?.to).toEqual(['me@example.com']);
    const raw = mail?.raw.toString('utf8') ?? '';
    expect(headerOf(mail?.raw as Buffer, 'subject')).toBe('[FengYu] Step approval: Write the quarterly note');
    expect(raw).toContain('Workflow: Quarterly notes');
    expect(raw).toContain('Started by: a background task');
    expect(raw).toContain(`Run: ${item.runId}`);
    expect(raw).toContain(`${t.host.url}/inbox`);
    expect(raw).not.toContain(t.host.token);
    expect(raw).not.toContain(SECRET);
  });

  it("keeps each owner's e-mail accounts apart: a second owner neither sees, uses nor overwrites the primary owner's", async () => {
    const bob = (await t.api('POST', '/api/owners', { name: 'bob-mail' })).body.token as string;
    const as = { 'x-fengyu-token': bob };
    const run = async (headers: Record<string, string>, step: Record<string, unknown>) => {
      const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 's', ...step }] }, config: { permissionMode: 'full-access', planApproval: false } }, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return until(async () => {
        const d = (await t.api('GET', `/api/agent/runs/${res.body.runId}`, undefined, headers)).body;
        return ['completed', 'failed'].includes(d.status) ? (d.executions as Array<{ result?: { accounts?: Array<{ id: string; from: string }> } }>)[0]?.result : undefined;
      }, 'the run to end');
    };
    const list = { tool: 'email_accounts_list', arguments: {} };
    expect((await run(as, list))?.accounts?.map((a) => a.id)).toEqual(['local-outbox']);
    await run(as, { tool: 'email_account_save', arguments: { id: 'office', name: 'Bob', from: 'bob@example.com', host: '127.0.0.1', port: smtp.port, tls: 'none', user: 'office', secret: 'bob-guess' } });
    expect((await run(as, list))?.accounts?.find((a) => a.id === 'office')?.from).toBe('bob@example.com');
    expect((await run({}, list))?.accounts?.find((a) => a.id === 'office')?.from).toBe('fengyu@example.com');
    // the primary owner's notification still authenticates with the primary owner's password
    const before = smtp.messages.length;
    await waitingItem();
    await until(() => smtp.messages.length > before, 'the e-mail');
    expect(smtp.messages.at(-1)?.raw.toString('utf8')).not.toContain('bob@example.com');
  });
});
