import { stableHash, type ToolEffect } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/tools/tool';
import { startTestHost, type TestHost } from '../support/host';

/** "x-fengyu-enum" inputs: options come from a read list tool through the catalog. */

function listTool(name: string, effect: ToolEffect, result: () => unknown): Tool {
  return {
    name,
    description: name,
    inputSchema: { type: 'object', properties: { kind: { type: 'string' } } },
    effect,
    source: 'plugin',
    id: `test.lists:${name}`,
    schemaRevision: stableHash({ name }),
    idempotent: true,
    available: true,
    invoke: async (args) => {
      calls.push({ name, args });
      return result();
    },
  };
}

const calls: Array<{ name: string; args: Record<string, unknown> }> = [];
const tools = [
  listTool('accounts_list', 'read', () => ({ accounts: [{ id: 7, label: 'alice@example.com' }, { id: 9, label: 'bob@example.com' }] })),
  listTool('tags_list', 'read', () => [{ tagId: 'vip', title: 'VIP customers' }, { tagId: 'all', title: 'Everyone' }, { title: 'no id' }]),
  listTool('plain_list', 'read', () => ['red', 'green']),
  listTool('mail_accounts', 'read', () => ({ success: true, summary: '2 accounts', accounts: [{ id: 'a1', email: 'x' }], options: [{ value: 'a1', label: 'alice@example.com' }] })),
  listTool('broken_list', 'read', () => ({ success: false, error: 'mailbox offline' })),
  listTool('delete_all', 'write', () => []),
];

let t: TestHost;
let id: string;
beforeAll(async () => {
  t = await startTestHost({ beforeDomains: (ctx) => ctx.catalog.register({ kind: 'plugin', list: async () => tools }) });
  const inputSchema = {
    type: 'object',
    properties: {
      account: { type: 'integer', 'x-fengyu-enum': 'accounts_list' },
      group: { type: 'string', 'x-fengyu-enum': { tool: 'tags_list', arguments: { kind: 'recipients' }, valueField: 'tagId', labelField: 'title' } },
      color: { type: 'string', 'x-fengyu-enum': { tool: 'plain_list' } },
      mail: { type: 'string', 'x-fengyu-enum': 'mail_accounts' },
      broken: { type: 'string', 'x-fengyu-enum': { tool: 'broken_list' } },
      danger: { type: 'string', 'x-fengyu-enum': { tool: 'delete_all' } },
      gone: { type: 'string', 'x-fengyu-enum': { tool: 'uninstalled_list' } },
      plain: { type: 'string' },
    },
  };
  const res = await t.api('POST', '/api/workflows', { name: 'Pickers', inputSchema, plan: { steps: [{ id: 'a', tool: 'echo', arguments: { value: '{{inputs.account}}' } }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  id = res.body.id;
});
afterAll(async () => {
  await t?.close();
});

const options = (field: string) => t.api('GET', `/api/workflows/${id}/inputs/${field}/options`);

describe('dynamic option inputs', () => {
  it('lists labels and values from a plugin list tool', async () => {
    expect((await options('account')).body).toEqual({ options: [{ value: 7, label: 'alice@example.com' }, { value: 9, label: 'bob@example.com' }] });
    expect((await options('group')).body.options).toEqual([{ value: 'vip', label: 'VIP customers' }, { value: 'all', label: 'Everyone' }]);
    expect(calls.find((c) => c.name === 'tags_list')?.args).toEqual({ kind: 'recipients' });
    expect((await options('color')).body.options).toEqual([{ value: 'red', label: 'red' }, { value: 'green', label: 'green' }]);
    expect((await options('mail')).body.options).toEqual([{ value: 'a1', label: 'alice@example.com' }]);
  });

  it('refuses write tools, missing tools, failures and fields without a source', async () => {
    const danger = await options('danger');
    expect(danger.status).toBe(409);
    expect(danger.body.error.code).toBe('workflow_options_tool_unusable');
    expect(calls.some((c) => c.name === 'delete_all')).toBe(false);
    expect((await options('gone')).body.error.code).toBe('workflow_options_tool_unusable');
    const broken = await options('broken');
    expect(broken.status).toBe(502);
    expect(broken.body.error.message).toContain('mailbox offline');
    expect((await options('plain')).body.error.code).toBe('workflow_input_no_options');
    expect((await options('nothing')).status).toBe(404);
    expect((await t.api('GET', '/api/workflows/zzz/inputs/account/options')).status).toBe(404);
  });

  it('rejects malformed enum sources at save time', async () => {
    const res = await t.api('POST', '/api/workflows', {
      name: 'Bad',
      inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-fengyu-enum': { tool: 'accounts_list', oops: 1 } } } },
      plan: { steps: [{ id: 'a', tool: 'noop' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].code).toBe('input_enum_invalid');
  });
});
