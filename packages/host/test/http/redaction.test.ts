import { REDACTED } from '@fengyu/protocol';
import { DEFAULT_OWNER } from '../../src/http/auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesHolding } from '../support/home-bytes';
import { startTestHost, type TestHost } from '../support/host';

/**
 * Every secret `GET /api/settings` shows is the one marker `[redacted]` — backend API keys and
 * MCP env/header values alike — and sending the document back keeps every secret.
 */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (v && typeof v === 'object') for (const c of Object.values(v)) strings(c, out);
  return out;
}

/** The stored backend key (sealed in the vault, opened here to compare). */
const storedKey = () => t.host.ctx.vault.getInternal(DEFAULT_OWNER, 'backend:remote');

describe('one redaction marker', () => {
  it('shows backend keys and MCP secrets as [redacted], and nothing else in their place', async () => {
    const patch = {
      backends: [{ id: 'remote', provider: 'openai', model: 'm', apiKey: 'sk-live-backend-1' }],
      mcpServers: { tools: { command: 'mcp-not-installed', args: [], env: { API_TOKEN: 'mcp-env-secret-2' } } },
    };
    expect((await t.api('PATCH', '/api/settings', patch)).status).toBe(200);
    const got = await t.api('GET', '/api/settings');
    expect(got.body.backends[0].apiKey).toBe(REDACTED);
    expect(got.body.mcpServers.tools.env.API_TOKEN).toBe(REDACTED);
    const text = JSON.stringify(got.body);
    expect(text).not.toContain('sk-live-backend-1');
    expect(text).not.toContain('mcp-env-secret-2');
    // no second marker anywhere in the document
    expect(strings(got.body).filter((s) => /^[•*]+$|redact/i.test(s))).toEqual([REDACTED, REDACTED]);
  });

  it('keeps every secret when the redacted document is sent back', async () => {
    const got = await t.api('GET', '/api/settings');
    expect((await t.api('PATCH', '/api/settings', { backends: got.body.backends, mcpServers: got.body.mcpServers })).status).toBe(200);
    expect(storedKey()).toBe('sk-live-backend-1');
    expect(filesHolding(t.home, 'sk-live-backend-1')).toEqual([]);
    expect(filesHolding(t.home, 'mcp-env-secret-2')).toEqual([]);
  });

  it('an older client sending the old marker back keeps the key instead of saving the marker', async () => {
    const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'remote', provider: 'openai', model: 'm', apiKey: '\u2022\u2022\u2022\u2022' }] });
    expect(res.status).toBe(200);
    expect(res.body.backends[0].apiKey).toBe(REDACTED);
    expect(storedKey()).toBe('sk-live-backend-1');
  });
});
