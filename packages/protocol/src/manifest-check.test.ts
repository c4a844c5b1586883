import { describe, expect, it } from 'vitest';
import { MESSAGES } from './i18n/index';
import { clampTimeout, compareSemver, manifestJsonSchema, supportsAi } from './manifest';
import { validateManifest } from './manifest-check';

const base = () => ({
  id: 'fan.summer.hello',
  name: 'Hello',
  version: '1.0.0',
  description: 'Says hello',
  worker: 'worker.js',
  rpc: {
    methods: {
      greet: {
        description: 'Greets',
        inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        outputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      },
    },
  },
  aiTools: [{ name: 'hello_greet', description: 'Greets someone', method: 'greet', effect: 'read' }],
  flowNodes: [{ tool: 'hello_greet', label: 'Greet', inputs: { name: { type: 'text', help: 'Who' } }, outputs: { text: { type: 'text' } } }],
});

type M = ReturnType<typeof base> & Record<string, unknown>;
const edit = (fn: (m: M) => void) => {
  const m = base() as M;
  fn(m);
  return m;
};
const tool = (m: M) => m.aiTools[0] as Record<string, unknown>;

const corpus: Array<[string, unknown, string, { existing?: string[]; files?: string[] }?]> = [
  ['not an object', [1, 2], 'manifest_not_object'],
  ['null', null, 'manifest_not_object'],
  ['missing id', edit((m) => delete (m as Partial<M>).id), 'manifest_missing_field'],
  ['id not reverse-dns', edit((m) => (m.id = 'Hello')), 'manifest_bad_id'],
  ['id single segment', edit((m) => (m.id = 'hello')), 'manifest_bad_id'],
  ['version not semver', edit((m) => (m.version = '1.0')), 'manifest_bad_version'],
  ['version leading zero', edit((m) => (m.version = '01.0.0')), 'manifest_bad_version'],
  ['unknown top-level field', edit((m) => (m.aitools = [])), 'manifest_unknown_field'],
  ['missing worker', edit((m) => delete (m as Partial<M>).worker), 'manifest_missing_field'],
  ['worker escapes package', edit((m) => (m.worker = '../evil.js')), 'manifest_bad_path'],
  ['worker absolute', edit((m) => (m.worker = '/usr/bin/evil.js')), 'manifest_bad_path'],
  ['worker backslash', edit((m) => (m.worker = '..\\evil.js')), 'manifest_bad_path'],
  ['worker not js', edit((m) => (m.worker = 'worker.py')), 'manifest_worker_not_js'],
  ['worker not in package', base(), 'manifest_file_missing', { files: ['other.js'] }],
  ['hooks escape', edit((m) => (m.hooks = 'hooks/../../x.json')), 'manifest_bad_path'],
  ['aiTool method missing', edit((m) => (tool(m).method = 'nope')), 'manifest_tool_method_missing'],
  ['effect missing', edit((m) => delete tool(m).effect), 'manifest_tool_effect_missing'],
  ['effect unknown', edit((m) => (tool(m).effect = 'delete')), 'manifest_tool_effect_unknown'],
  ['effect command not for plugins', edit((m) => (tool(m).effect = 'command')), 'manifest_tool_effect_unknown'],
  ['input schema not an object', edit((m) => ((m.rpc.methods.greet as Record<string, unknown>).inputSchema = 'string')), 'manifest_schema_not_object'],
  ['input schema of type array', edit((m) => ((m.rpc.methods.greet as Record<string, unknown>).inputSchema = { type: 'array' })), 'manifest_schema_not_object'],
  ['output schema an array', edit((m) => ((m.rpc.methods.greet as Record<string, unknown>).outputSchema = [])), 'manifest_schema_not_object'],
  ['schema does not compile', edit((m) => ((m.rpc.methods.greet as Record<string, unknown>).inputSchema = { type: 'object', properties: 5 })), 'manifest_schema_invalid'],
  ['duplicate tool in plugin', edit((m) => m.aiTools.push({ ...m.aiTools[0]! })), 'manifest_tool_duplicate'],
  ['tool exists in another plugin', base(), 'manifest_tool_conflict', { existing: ['hello_greet'] }],
  ['bad tool name', edit((m) => (tool(m).name = 'hello greet')), 'manifest_tool_name_bad'],
  ['timeout not an integer', edit((m) => (tool(m).timeoutSeconds = 1.5)), 'manifest_timeout_invalid'],
  ['timeout a string', edit((m) => (tool(m).timeoutSeconds = '30')), 'manifest_timeout_invalid'],
  ['reserved method name', edit((m) => ((m.rpc.methods as Record<string, unknown>)['$/cancelRequest'] = m.rpc.methods.greet)), 'manifest_bad_method_name'],
  ['flow node for unknown tool', edit((m) => (m.flowNodes[0]!.tool = 'ghost')), 'manifest_flow_tool_unknown'],
  ['flow node twice', edit((m) => m.flowNodes.push({ ...m.flowNodes[0]! })), 'manifest_flow_duplicate'],
  ['flow help for unknown input', edit((m) => ((m.flowNodes[0]!.inputs as Record<string, unknown>).age = { type: 'number' })), 'manifest_flow_field_unknown'],
  ['flow port type unknown', edit((m) => ((m.flowNodes[0]!.outputs as Record<string, unknown>).text = { type: 'string' })), 'manifest_bad_field'],
  ['missing rpc', edit((m) => delete (m as Partial<M>).rpc), 'manifest_missing_field'],
  ['unknown sandbox capability', edit((m) => (m.sandbox = { network: true, filesystem: 'all' })), 'manifest_unknown_field'],
  ['unknown aiTool field', edit((m) => (tool(m).inputSchema = {})), 'manifest_unknown_field'],
];

describe('validateManifest corpus', () => {
  it('accepts the base manifest', () => {
    const r = validateManifest(base(), { files: new Set(['worker.js']) });
    expect(r).toMatchObject({ ok: true });
    expect(supportsAi({ aiTools: base().aiTools as never })).toBe(true);
    expect(supportsAi({ aiTools: [] })).toBe(false);
  });

  it.each(corpus)('%s → %s', (_name, manifest, code, opts) => {
    const r = validateManifest(manifest, { existingToolNames: opts?.existing, files: opts?.files ? new Set(opts.files) : undefined });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.code)).toContain(code);
    for (const p of r.problems) expect(MESSAGES.en[p.code], p.code).toBeTypeOf('string');
  });

  it('names every problem at once', () => {
    const m = edit((x) => {
      x.id = 'BAD';
      x.version = 'v1';
      tool(x).method = 'missing';
      delete tool(x).effect;
    });
    const r = validateManifest(m, { existingToolNames: ['hello_greet'] });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.map((p) => p.code).sort()).toEqual(
        ['manifest_bad_id', 'manifest_bad_version', 'manifest_tool_conflict', 'manifest_tool_effect_missing', 'manifest_tool_method_missing'].sort(),
      );
    }
  });
});

describe('manifest helpers', () => {
  it('clamps timeouts, compares versions and exports a JSON Schema', () => {
    expect(clampTimeout(0)).toBe(1);
    expect(clampTimeout(10_000)).toBe(600);
    expect(clampTimeout(undefined)).toBeUndefined();
    expect(compareSemver('1.2.0', '1.10.0')).toBe(-1);
    expect(compareSemver('1.0.0-beta', '1.0.0')).toBe(-1);
    expect(compareSemver('2.0.0', '2.0.0')).toBe(0);
    expect(compareSemver('1.0.0-alpha.2', '1.0.0-alpha.10')).toBe(-1);
    expect(manifestJsonSchema()).toMatchObject({ type: 'object' });
  });
});

describe('manifest i18n', () => {
  const zh = { 'zh-CN': { name: '问候', description: '打个招呼', tools: { hello_greet: { description: '向某人问好', label: '问候', category: '示例', help: '**问好**', inputs: { name: { label: '名字', help: '向谁问好' } }, outputs: { text: { label: '问候语' } } } } } };

  it('accepts translations of the name, description and each tool', () => {
    const r = validateManifest(edit((m) => (m.i18n = zh)));
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (r.ok) expect(r.manifest.i18n?.['zh-CN']?.tools?.hello_greet?.label).toBe('问候');
  });

  it('refuses, all at once: an unknown language, an unknown tool, an undeclared field, a wrong type and an unknown key', () => {
    const r = validateManifest(
      edit((m) => {
        m.i18n = {
          fr: { name: 'Bonjour' },
          'zh-CN': { name: 5, colour: 'red', tools: { hello_wave: { label: '挥手' }, hello_greet: { inputs: { age: { label: '年龄' } } } } },
        };
      }),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const got = r.problems.map((p) => `${p.code} ${p.field}`);
    expect(got).toContain('manifest_i18n_tool_unknown i18n.zh-CN.tools.hello_wave');
    expect(got).toContain('manifest_i18n_field_unknown i18n.zh-CN.tools.hello_greet.inputs.age');
    expect(got).toContain('manifest_unknown_field i18n.zh-CN.colour');
    expect(got.some((g) => g.startsWith('manifest_bad_field i18n.zh-CN.name'))).toBe(true);
    expect(got.some((g) => g.includes('i18n') && g.includes('fr'))).toBe(true);
  });

  it('is described by the published JSON Schema', () => {
    expect(JSON.stringify((manifestJsonSchema().properties as Record<string, unknown>).i18n)).toContain('zh-CN');
  });

  it('has both languages for its problem codes', () => {
    for (const code of ['manifest_i18n_tool_unknown', 'manifest_i18n_field_unknown']) {
      expect(MESSAGES.en[code]).toBeTruthy();
      expect(MESSAGES['zh-CN'][code]).toBeTruthy();
    }
  });
});
