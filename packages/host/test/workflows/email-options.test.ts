import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packPlugin } from '@fengyu/plugin-sdk/pack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** An "x-fengyu-enum" input backed by the official e-mail plugin's email_accounts_list (packed and installed here). */

const EMAIL_DIR = join(import.meta.dirname, '../../../plugins/email');
let t: TestHost;
let out: string;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'fengyu-email-pack-'));
  const { file } = await packPlugin(EMAIL_DIR, join(out, 'email.fyp'));
  t = await startTestHost();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(readFileSync(file))]), 'email.fyp');
  const res = await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
  expect(res.status, await res.clone().text()).toBe(201);
}, 120_000);
afterAll(async () => {
  await t?.close();
  rmSync(out, { recursive: true, force: true });
});

describe('e-mail account picker', () => {
  it('lists the accounts of the e-mail plugin as options', async () => {
    const def = await t.api('POST', '/api/workflows', {
      name: 'Pick an account',
      inputSchema: { type: 'object', required: ['account'], properties: { account: { type: 'string', title: 'Send from', 'x-fengyu-enum': 'email_accounts_list' } } },
      plan: { steps: [{ id: 'a', tool: 'echo', arguments: { value: '{{inputs.account}}' } }] },
    });
    expect(def.status, JSON.stringify(def.body)).toBe(200);
    const res = await t.api('GET', `/api/workflows/${def.body.id}/inputs/account/options`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const values = (res.body.options as Array<{ value: unknown; label: string }>).map((o) => o.value);
    expect(values).toContain('local-outbox');
    for (const o of res.body.options) expect(typeof o.label).toBe('string');
  });
});
