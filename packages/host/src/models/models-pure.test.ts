import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../clock';
import { openVault } from '../secrets/secrets.domain';
import { migrate, openDatabase, type OpenedDatabase } from '../storage/database';
import { REDACTED } from '@fengyu/protocol';
import { trimHistory } from '../chat/chat.service';
import { KEY_MARKER, prepareBackends, redactBackends, validateBackends } from './backends.settings';
import { fileParams, fileRefsPrompt, injectFileArgument, routeB } from './file-routing';
import { stepResult } from './model-step.runner';
import { parseJsonAnswer, planSystemPrompt } from './plan-prompt';
import { SecretStore } from './secret-store';
import { forModel, MAX_RESULT_CHARS_FOR_MODEL, wireName } from './tool-loop';
import type { FileGrant } from '../tools/tool';

describe('parseJsonAnswer', () => {
  const cases: Array<[string, unknown]> = [
    ['{"steps":[]}', { steps: [] }],
    ['```json\n{"steps":[1]}\n```', { steps: [1] }],
    ['```\n{"a":1}\n```', { a: 1 }],
    ['Here is the plan:\n```json\n{"a":2}\n```\nDone.', { a: 2 }],
    ['Plan: {"a":3} — hope it helps', { a: 3 }],
    ['  [1,2]  ', [1, 2]],
  ];
  it.each(cases)('parses %j', (text, value) => {
    expect(parseJsonAnswer(text)).toEqual({ ok: true, value });
  });
  it.each(['', 'no json here', '{"a":', '```json\n{broken\n```'])('reports %j as unparseable', (text) => {
    const r = parseJsonAnswer(text);
    expect(r.ok).toBe(false);
  });
});

describe('planSystemPrompt', () => {
  it('lists the secret names a drafted plan may use (by name only), and says where', () => {
    const text = planSystemPrompt({ goal: 'g', catalog: [], inputs: {}, memories: [], secretNames: ['GITHUB_TOKEN', 'SMTP_PASS'] });
    expect(text).toMatch(/\{\{secrets\.<NAME>\}\} only inside a tool step's "arguments"[^\n]*: GITHUB_TOKEN, SMTP_PASS/);
    expect(planSystemPrompt({ goal: 'g', catalog: [], inputs: {}, memories: [] })).not.toContain('secrets.');
  });

  it('lists only available tools, the schema, inputs and memories', () => {
    const entry = (name: string, available: boolean) => ({ name, description: `d ${name}`, inputSchema: { type: 'object' }, effect: 'read' as const, source: 'builtin' as const, id: `builtin:${name}`, schemaRevision: '1', idempotent: false, available });
    const text = planSystemPrompt({ goal: 'g', catalog: [entry('here', true), entry('gone', false)], inputs: { region: 'EU' }, memories: ['likes csv'] });
    expect(text).toContain('"name":"here"');
    expect(text).toContain('"description":"d here"');
    expect(text).toContain('"effect":"read"');
    expect(text).toContain('"inputSchema":{"type":"object"}');
    expect(text).not.toContain('"name":"gone"');
    expect(text).toContain('"region":"EU"');
    expect(text).toContain('likes csv');
    expect(text).toContain('AgentPlan JSON schema');
    expect(text).toMatch(/NOT callable/);
  });
});

describe('backend keys', () => {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-keys-'));
  let database: OpenedDatabase;
  let secrets: SecretStore;
  beforeAll(async () => {
    database = openDatabase(home);
    await migrate(database.db);
    secrets = new SecretStore(await openVault(database, { home }, systemClock), 'backend');
  });
  afterAll(async () => {
    await database.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('moves keys into the vault (sealed), keeps them on the marker, drops them when absent, and scopes them per owner', async () => {
    const stored = await prepareBackends(secrets, 'alice', [{ id: 'a', provider: 'openai', model: 'm', apiKey: 'sk-1-alice-key' }, { id: 'b', provider: 'openai', model: 'm' }]);
    expect(stored[0]?.apiKey).toBe(KEY_MARKER);
    expect(stored[1]?.apiKey).toBeUndefined();
    expect(secrets.get('alice', 'a')).toBe('sk-1-alice-key');
    expect(statSync(join(home, 'secrets.key')).mode & 0o777).toBe(0o600);
    for (const f of readdirSync(home)) expect(readFileSync(join(home, f)).includes('sk-1-alice-key')).toBe(false);
    await prepareBackends(secrets, 'alice', [{ id: 'a', provider: 'openai', model: 'm', apiKey: KEY_MARKER }]);
    expect(secrets.get('alice', 'a')).toBe('sk-1-alice-key');
    expect(secrets.get('bob', 'a')).toBeUndefined();
    const forged = await prepareBackends(secrets, 'bob', [{ id: 'a', provider: 'openai', model: 'm', apiKey: KEY_MARKER }]);
    expect(forged[0]?.apiKey).toBeUndefined(); // a marker without a stored key is not a key
    await prepareBackends(secrets, 'alice', [{ id: 'a', provider: 'openai', model: 'm' }]);
    expect(secrets.get('alice', 'a')).toBeUndefined();
  });

  it('redacts any key value with the one redaction marker', () => {
    expect(KEY_MARKER).toBe(REDACTED);
    expect(redactBackends([{ id: 'a', provider: 'openai', model: 'm', apiKey: 'sk-live' }])[0]?.apiKey).toBe(REDACTED);
  });

  it('reads the marker of earlier versions as "keep", never as a new key', async () => {
    await prepareBackends(secrets, 'carol', [{ id: 'a', provider: 'openai', model: 'm', apiKey: 'sk-carol' }]);
    const kept = await prepareBackends(secrets, 'carol', [{ id: 'a', provider: 'openai', model: 'm', apiKey: '\u2022\u2022\u2022\u2022' }]);
    expect(kept[0]?.apiKey).toBe(REDACTED);
    expect(secrets.get('carol', 'a')).toBe('sk-carol');
  });

  it('validates ids, key sources and base URLs', () => {
    expect(validateBackends([{ id: 'a', provider: 'openai-compatible', model: 'm' }]).map((p) => p.field)).toEqual(['backends[0].baseURL']);
    expect(validateBackends([{ id: 'a', provider: 'openai', model: 'm', apiKey: 'x', apiKeyEnv: 'Y' }])).toHaveLength(1);
    expect(validateBackends([{ id: 'a', provider: 'openai', model: 'm' }, { id: 'a', provider: 'anthropic', model: 'm' }])).toHaveLength(1);
  });
});

describe('file routing', () => {
  const grant = (name: string, kind: 'file' | 'directory', access: FileGrant['access'] = 'read'): FileGrant => ({ name, path: `/data/${name}`, kind, access });
  const tool = (properties: Record<string, unknown>) => ({ inputSchema: { type: 'object', properties } });

  it('finds file-like string parameters by format or name', () => {
    expect(fileParams(tool({ filePath: { type: 'string' }, sheet: { type: 'string' } }).inputSchema)).toEqual([{ name: 'filePath', kind: 'file' }]);
    expect(fileParams(tool({ src: { type: 'string', format: 'fengyu-file' }, outputDir: { type: 'string' } }).inputSchema)).toEqual([
      { name: 'src', kind: 'file' },
      { name: 'outputDir', kind: 'directory' },
    ]);
    expect(fileParams(tool({ filePath: { type: 'number' } }).inputSchema)).toEqual([]);
    expect(fileParams({ type: 'object' })).toEqual([]);
  });

  it('route B injects the single matching grant; otherwise route A leaves arguments alone', () => {
    const one = tool({ filePath: { type: 'string' } });
    expect(injectFileArgument(one, { filePath: '/etc/passwd' }, [grant('book', 'file')])).toEqual({ filePath: '/data/book' });
    expect(injectFileArgument(one, {}, [grant('a', 'file'), grant('b', 'file')])).toEqual({});
    expect(injectFileArgument(one, {}, [])).toEqual({});
    const two = tool({ filePath: { type: 'string' }, outputDir: { type: 'string' } });
    expect(routeB(two, [grant('book', 'file')])).toBeUndefined();
    const dir = tool({ outputDir: { type: 'string' } });
    expect(routeB(dir, [grant('out', 'directory', 'read')])).toBeUndefined();
    expect(routeB(dir, [grant('out', 'directory', 'read-write')])?.grant.name).toBe('out');
    expect(fileRefsPrompt([grant('book', 'file')])).toContain('"/data/book"');
    expect(fileRefsPrompt([])).toBe('');
  });
});

describe('small helpers', () => {
  it('makes provider-safe unique tool names', () => {
    const taken = new Set<string>();
    expect(wireName('github__search', taken)).toBe('github__search');
    expect(wireName('a.b c', taken)).toBe('a_b_c');
    expect(wireName('a b.c', taken)).toBe('a_b_c_2');
    expect(wireName('x'.repeat(80), taken)).toHaveLength(64);
  });

  it('clips huge tool results for the model only', () => {
    expect(forModel({ a: 1 })).toEqual({ a: 1 });
    expect(forModel(undefined)).toBeNull();
    const big = forModel({ text: 'x'.repeat(MAX_RESULT_CHARS_FOR_MODEL * 2) }) as { truncated: boolean; preview: string; totalChars: number };
    expect(big.truncated).toBe(true);
    expect(big.preview).toHaveLength(MAX_RESULT_CHARS_FOR_MODEL);
    expect(big.totalChars).toBeGreaterThan(MAX_RESULT_CHARS_FOR_MODEL * 2);
  });

  it('returns JSON only when the instruction asks for it', () => {
    expect(stepResult('Answer as JSON', '```json\n{"a":1}\n```')).toEqual({ a: 1 });
    expect(stepResult('Answer as JSON', 'not json')).toBe('not json');
    expect(stepResult('Say hi', '{"a":1}')).toBe('{"a":1}');
  });

  it('trims history at a user message so no tool result loses its call', () => {
    const msgs = [
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: 'a1' },
      { role: 'tool', content: [] },
      { role: 'assistant', content: 'a2' },
      { role: 'user', content: 'u2' },
      { role: 'assistant', content: 'a3' },
    ] as never[];
    expect(trimHistory(msgs, 10)).toHaveLength(6);
    expect(trimHistory(msgs, 4).map((m: { content: unknown }) => m.content)).toEqual(['u2', 'a3']);
    expect(trimHistory(msgs, 1)).toEqual([]);
  });
});
