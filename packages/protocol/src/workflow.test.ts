import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ToolInfo } from './validate';
import { inputContract, validateWorkflowDefinition } from './workflow';
import { checkInputs, inputChecker, renderGoal } from './workflow-inputs';

const tools: Record<string, ToolInfo> = {
  echo: { name: 'echo', inputSchema: { type: 'object' }, effect: 'read', idempotent: false, source: 'builtin', available: true },
  write_note: { name: 'write_note', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, effect: 'write', idempotent: false, source: 'builtin', available: true },
  excel_filter: {
    name: 'excel_filter',
    inputSchema: { type: 'object', required: ['filePath', 'outputDirectory'], properties: { filePath: { type: 'string', format: 'fengyu-file' }, outputDirectory: { type: 'string', format: 'fengyu-directory', title: 'Output folder' } } },
    effect: 'write',
    idempotent: true,
    source: 'plugin',
    available: true,
  },
  off: { name: 'off', inputSchema: { type: 'object' }, effect: 'read', idempotent: false, source: 'plugin', available: false },
};
const ctx = { tool: (n: string) => tools[n] };
const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, count: { type: 'integer' }, sheet: { type: 'string', format: 'fengyu-file' }, out: { type: 'string', 'x-fengyu-auto': 'shared-directory' } } };

describe('validateWorkflowDefinition', () => {
  it('accepts a valid definition', () => {
    const r = validateWorkflowDefinition({ name: 'ok', inputSchema: schema, plan: { goal: 'hi {{inputs.name}}', steps: [{ id: 'a', tool: 'echo', arguments: { v: '{{inputs.count}}', f: '@file:sheet', d: '@file:out' } }] } }, ctx);
    expect(r.ok).toBe(true);
  });

  it('reports every problem at once', () => {
    const steps = Array.from({ length: 65 }, (_, i) => ({ id: `s${i}`, tool: 'echo' }));
    steps[0] = { id: 's0', tool: 'echo', arguments: { v: '{{inputs.nope}}' } } as never;
    steps[1] = { id: 's1', tool: 'write_note', arguments: { text: 'x' }, retry: { maxAttempts: 3 } } as never;
    steps[2] = { id: 's2', tool: 'run_workflow_abc' } as never;
    steps[3] = { id: 's3', tool: 'missing_tool' } as never;
    steps[4] = { id: 's4', tool: 'echo', arguments: { v: '{{inputs.sheet}}' } } as never;
    const r = validateWorkflowDefinition({ name: '', inputSchema: schema, plan: { goal: '{{inputs.ghost}}', steps } }, ctx);
    expect(r.ok).toBe(false);
    const codes = r.ok ? [] : r.problems.map((p) => p.code);
    for (const c of ['workflow_name_required', 'plan_too_many_steps', 'ref_undeclared_input', 'retry_unsafe', 'workflow_nested_tool', 'step_unknown_tool', 'ref_file_input_as_value', 'goal_ref_undeclared_input']) expect(codes).toContain(c);
    expect(codes.filter((c) => c === 'step_unknown_tool')).toHaveLength(1);
  });

  it('names a writing step whose output folder is missing or is an uploaded file, in plain words, before any run', () => {
    const step = (args: Record<string, unknown> | undefined) => ({ name: 'x', inputSchema: schema, plan: { steps: [{ id: 'filter', title: 'Keep the north', tool: 'excel_filter', ...(args ? { arguments: args } : {}) }] } });
    const problems = (args: Record<string, unknown> | undefined) => {
      const r = validateWorkflowDefinition(step(args), ctx);
      return r.ok ? [] : r.problems;
    };
    for (const args of [undefined, { filePath: '@file:sheet' }, { filePath: '@file:sheet', outputDirectory: '' }]) {
      const found = problems(args).filter((p) => p.field === 'arguments.outputDirectory');
      expect(found, JSON.stringify(args)).toEqual([{ code: 'step_folder_missing', stepId: 'filter', field: 'arguments.outputDirectory', params: { stepId: 'filter', step: 'Keep the north', argument: 'Output folder' } }]);
    }
    expect(problems({ filePath: '@file:sheet', outputDirectory: '@file:sheet' }).map((p) => p.code)).toEqual(['step_folder_not_folder']);
    expect(problems({ filePath: '@file:sheet', outputDirectory: '@file:out' })).toEqual([]);
  });

  it('never reports a folder problem for a folder created per run (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.option(fc.string({ maxLength: 30 }), { nil: undefined }), (name, title) => {
        const inputSchema = { type: 'object', properties: { sheet: { type: 'string', format: 'fengyu-file' }, [`d_${name}`]: { type: 'string', 'x-fengyu-auto': 'shared-directory' } } };
        const plan = { steps: [{ id: 's', ...(title !== undefined ? { title } : {}), tool: 'excel_filter', arguments: { filePath: '@file:sheet', outputDirectory: `@file:d_${name}` } }] };
        const r = validateWorkflowDefinition({ name: 'x', inputSchema, plan }, ctx);
        return r.ok || r.problems.every((p) => !p.code.startsWith('step_folder'));
      }),
    );
  });

  it('allows unavailable tools only in drafts', () => {
    const def = { name: 'x', plan: { steps: [{ id: 'a', tool: 'off' }] } };
    expect(validateWorkflowDefinition(def, { ...ctx, allowUnavailableTools: true }).ok).toBe(true);
    const strict = validateWorkflowDefinition(def, ctx);
    expect(strict.ok ? [] : strict.problems.map((p) => p.code)).toEqual(['step_unavailable_tool']);
  });

  it('rejects malformed input schemas and picker keywords', () => {
    const bad = { type: 'object', required: ['x'], properties: { 'bad name': { type: 'string' }, a: { type: 'string', 'x-fengyu-auto': 'tmp' }, b: { type: 'string', 'x-fengyu-enum': { tool: 1 } } } };
    const r = validateWorkflowDefinition({ name: 'x', inputSchema: bad, plan: { steps: [{ id: 'a', tool: 'echo' }] } }, ctx);
    const codes = r.ok ? [] : r.problems.map((p) => p.code).sort();
    expect(codes).toEqual(['input_auto_invalid', 'input_enum_invalid', 'input_name_invalid', 'input_required_undeclared']);
  });
});

describe('checkInputs', () => {
  it('names every missing and wrong field', () => {
    const r = checkInputs({ ...schema, required: ['name', 'sheet'], properties: { ...schema.properties, flag: { type: 'boolean' } } }, { count: 'three', flag: 'yes' });
    expect(r.ok).toBe(false);
    const fields = r.ok ? [] : r.problems.map((p) => `${p.code}:${p.field}`).sort();
    expect(fields).toEqual(['input_invalid:count', 'input_invalid:flag', 'input_missing:name', 'input_missing:sheet']);
  });

  it('applies defaults and drops file inputs from the values', () => {
    const r = checkInputs({ type: 'object', properties: { n: { type: 'number', default: 2 }, f: { type: 'string', format: 'fengyu-file' } } }, { f: 'x' });
    expect(r).toEqual({ ok: true, inputs: { n: 2 } });
  });

  it('rejects non-object inputs', () => {
    expect(checkInputs(schema, [1]).ok).toBe(false);
  });
});

describe('inputChecker', () => {
  const s = { type: 'object', required: ['n'], properties: { n: { type: 'integer' }, tags: { type: 'array', default: ['a'] }, f: { type: 'string', format: 'fengyu-file' } } };

  it('answers exactly as checkInputs, call after call, with fresh copies of the defaults', () => {
    const check = inputChecker(s);
    for (const inputs of [{ n: 1 }, { n: 'x' }, {}, [1], undefined, { n: 2, f: 'x', extra: true }]) {
      expect(check(inputs)).toEqual(checkInputs(s, inputs));
      expect(check(inputs, ['f'])).toEqual(checkInputs(s, inputs, ['f']));
    }
    const first = check({ n: 1 });
    if (!first.ok) throw new Error('refused');
    (first.inputs.tags as string[]).push('changed');
    expect(check({ n: 1 })).toEqual({ ok: true, inputs: { n: 1, tags: ['a'] } });
  });

  it('checks against the schema it was made from: a changed schema needs a new checker, which sees the change', () => {
    const before = inputChecker(s);
    const changed = { ...s, properties: { ...s.properties, n: { type: 'string' } } };
    const after = inputChecker(changed);
    expect(before({ n: 1 }).ok).toBe(true);
    expect(after({ n: 1 })).toEqual(checkInputs(changed, { n: 1 }));
    expect(after({ n: 1 }).ok).toBe(false);
    expect(after({ n: 'one' }).ok).toBe(true);
  });
});

describe('inputContract and renderGoal', () => {
  it('splits values, files and shared directories', () => {
    expect(inputContract(schema)).toMatchObject({ values: ['name', 'count'], files: ['sheet'], sharedDirectories: ['out'] });
  });

  it('renders inputs as text in the goal', () => {
    expect(renderGoal('n={{inputs.n}} o={{inputs.o.k}} x={{inputs.x}}', { n: 3, o: { k: [1] } })).toBe('n=3 o=[1] x={{inputs.x}}');
  });
});

describe('checkInputs (property)', () => {
  const TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const;
  const matches = (type: (typeof TYPES)[number], v: unknown) =>
    type === 'string' ? typeof v === 'string'
    : type === 'integer' ? Number.isInteger(v)
    : type === 'number' ? typeof v === 'number'
    : type === 'boolean' ? typeof v === 'boolean'
    : type === 'array' ? Array.isArray(v)
    : !!v && typeof v === 'object' && !Array.isArray(v);
  const field = fc.record({ type: fc.constantFrom(...TYPES), required: fc.boolean(), value: fc.option(fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.array(fc.integer()), fc.dictionary(fc.string(), fc.integer())), { nil: undefined }) });

  it('names exactly the missing and mistyped fields', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), field, { maxKeys: 8 }), (fields) => {
        const entries = Object.entries(fields);
        const schema = { type: 'object', properties: Object.fromEntries(entries.map(([n, f]) => [n, { type: f.type }])), required: entries.filter(([, f]) => f.required).map(([n]) => n) };
        const inputs = Object.fromEntries(entries.filter(([, f]) => f.value !== undefined).map(([n, f]) => [n, f.value]));
        const expected = entries
          .flatMap(([n, f]) => (f.value === undefined ? (f.required ? [`input_missing:${n}`] : []) : matches(f.type, f.value) ? [] : [`input_invalid:${n}`]))
          .sort();
        const r = checkInputs(schema, inputs);
        const got = r.ok ? [] : [...new Set(r.problems.map((p) => `${p.code}:${p.field}`))].sort();
        expect(got).toEqual(expected);
      }),
    );
  });
});
