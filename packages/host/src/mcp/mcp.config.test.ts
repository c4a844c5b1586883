import { describe, expect, it } from 'vitest';
import { fingerprint, McpServersSettings, REDACTED, redactServers, restoreRedacted } from './mcp.config';

describe('mcpServers settings', () => {
  it('parses both shapes with defaults', () => {
    const v = McpServersSettings.parse({ a: { command: 'node' }, 'b-2': { url: 'https://h.example/mcp' } });
    expect(v).toEqual({ a: { command: 'node', args: [], env: {} }, 'b-2': { url: 'https://h.example/mcp', headers: {} } });
  });

  it.each([
    [{ 'has space': { command: 'x' } }],
    [{ 'a__b': { command: 'x' } }],
    [{ 'dot.name': { command: 'x' } }],
    [{ '': { command: 'x' } }],
    [{ ['x'.repeat(65)]: { command: 'x' } }],
    [{ a: { command: '' } }],
    [{ a: { command: 'x', url: 'http://h' } }],
    [{ a: { url: 'ftp://h' } }],
    [{ a: { url: 'not a url' } }],
    [{ a: { command: 'x', args: 'not-an-array' } }],
    [{ a: { command: 'x', env: { K: 1 } } }],
    [{ a: { url: 'http://h', headers: { k: ['v'] } } }],
    [{ a: { command: 'x', timeoutSeconds: 0 } }],
    [{ a: { command: 'x', timeoutSeconds: 601 } }],
    [{ a: {} }],
    [{ a: null }],
  ])('refuses %j', (value) => {
    expect(McpServersSettings.safeParse(value).success).toBe(false);
  });

  it('redacts env and header values and restores them when patched back', () => {
    const saved = McpServersSettings.parse({ s: { command: 'x', env: { TOKEN: 't0p' } }, h: { url: 'http://h', headers: { authorization: 'Bearer b' } } });
    const shown = redactServers(saved) as typeof saved;
    expect(JSON.stringify(shown)).not.toMatch(/t0p|Bearer/);
    expect(restoreRedacted(shown, saved)).toEqual(saved);
    const changed = restoreRedacted(McpServersSettings.parse({ s: { command: 'x', env: { TOKEN: 'new', OTHER: REDACTED } } }), saved);
    expect((changed.s as { env: Record<string, string> }).env).toEqual({ TOKEN: 'new', OTHER: REDACTED });
  });

  it('fingerprints ignore key order', () => {
    expect(fingerprint({ command: 'x', args: [], env: { A: '1', B: '2' } })).toBe(fingerprint({ env: { B: '2', A: '1' }, args: [], command: 'x' }));
  });
});
