import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ResolveScope, resolveShellTemplate, ShellTemplateError, shellSlots, shellTemplateProblems } from '@fengyu/protocol';

/**
 * (Here rather than beside protocol's shell-template.ts: the contract package does no I/O, and
 * this test runs the real bash.)
 * Values reach a shell command as data: each template is rendered and run by the real bash, and
 * what bash prints must be the value itself, whatever it holds.
 */

const scope = (inputs: Record<string, unknown>): ResolveScope => ({ stepIds: ['a'], results: new Map([['a', { out: 'x; id' }]]), dependsOn: ['a'], inputs });

/** Runs each line in one bash; every line prints one NUL-terminated record. */
function bashRecords(lines: string[]): string[] {
  const out = execFileSync('bash', ['-c', lines.join('\n')], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  return out.split('\0').slice(0, -1);
}

/** Templates with one placeholder in each supported context; `%` stands for the rest of printf's words. */
const TEMPLATES: Array<[string, (v: string) => string]> = [
  ["printf '%s\\0' {{inputs.v}}", (v) => v],
  ['printf \'%s\\0\' "{{inputs.v}}"', (v) => v],
  ["printf '%s\\0' '{{inputs.v}}'", (v) => v],
  ["printf '%s\\0' pre{{inputs.v}}post", (v) => `pre${v}post`],
  ['printf \'%s\\0\' "a $(printf %s {{inputs.v}}) b"', (v) => `a ${v} b`],
  ["printf '%s\\0' \"x'{{inputs.v}}'y\"", (v) => `x'${v}'y`],
  ["printf '%s\\0' 'a\"{{inputs.v}}\"b'", (v) => `a"${v}"b`],
  ['X={{inputs.v}}; printf \'%s\\0\' "$X"', (v) => v],
  ['printf \'%s\\0\' "$(case 1 in 1) printf %s {{inputs.v}};; esac)"', (v) => v],
];

const HOSTILE = ['a; id', "it's", '$(id)', '`id`', '"; id; "', "'; id; '", '\\', '\\"', 'a\nb', '$HOME', '${x:-`id`}', '!', '*', '~', '-n', '', ' spaced  out ', '{{inputs.v}}', "\\'", 'a\\', '$\'\\x41\''];

describe('shell templates', () => {
  it('renders every hostile value as the exact text in every supported context (real bash)', () => {
    const lines: string[] = [];
    const expected: string[] = [];
    for (const [template, want] of TEMPLATES) {
      for (const v of HOSTILE) {
        lines.push(resolveShellTemplate(template, scope({ v })));
        expected.push(want(v));
      }
    }
    expect(bashRecords(lines)).toEqual(expected);
  });

  it('any string stays data (property, real bash)', () => {
    const samples = fc.sample(fc.string({ unit: fc.oneof(fc.constantFrom("'", '"', '\\', '$', '`', '(', ')', ';', '\n', '{', '}', ' ', '#', '!'), fc.string({ minLength: 1, maxLength: 1 })) }).filter((s) => !s.includes('\0')), 150);
    const lines: string[] = [];
    const expected: string[] = [];
    for (const v of samples) {
      for (const [template, want] of TEMPLATES.slice(0, 4)) {
        lines.push(resolveShellTemplate(template, scope({ v })));
        expected.push(want(v));
      }
    }
    expect(bashRecords(lines)).toEqual(expected);
  });

  it('a whole-value placeholder is one word (a program name), never a command line', () => {
    expect(resolveShellTemplate('{{inputs.v}}', scope({ v: 'rm -rf /' }))).toBe("'rm -rf /'");
    expect(resolveShellTemplate('echo {{last.result.out}}', scope({}))).toBe("echo 'x; id'");
    expect(resolveShellTemplate('echo {{inputs.n}}', scope({ n: { a: 1 } }))).toBe(`echo '{"a":1}'`);
  });

  it('refuses places where no quoting keeps a value data', () => {
    const refused: Array<[string, string]> = [
      ['echo \\{{inputs.v}}', 'after a backslash'],
      ['echo `echo {{inputs.v}}`', 'inside backticks'],
      ['echo "`echo {{inputs.v}}`"', 'inside backticks'],
      ['echo ${x:-{{inputs.v}}}', 'inside a ${…} expansion'],
      ['echo "${x:-{{inputs.v}}}"', 'inside a ${…} expansion'],
      ["echo ${x:-'{{inputs.v}}'}", 'inside a ${…} expansion'],
      ['echo $(( {{inputs.v}} + 1 ))', 'inside arithmetic'],
      ['(( {{inputs.v}} ))', 'inside arithmetic'],
      ['echo $[{{inputs.v}}]', 'inside arithmetic'],
      ["echo $'{{inputs.v}}'", "inside $'…'"],
      ['echo hi # {{inputs.v}}', 'inside a comment'],
      ['cat <<EOF\n{{inputs.v}}\nEOF', 'inside a here-document'],
      ["cat <<'EOF'\n{{inputs.v}}\nEOF\necho done", 'inside a here-document'],
      ['cat <<-EOF\n\t{{inputs.v}}\n\tEOF', 'inside a here-document'],
      ['echo "unterminated {{inputs.v}}', 'inside an unterminated construct'],
    ];
    for (const [template, why] of refused) {
      expect(shellSlots(template).map((s) => s.refused), template).toEqual([why]);
      expect(() => resolveShellTemplate(template, scope({ v: 'a; id' })), template).toThrow(ShellTemplateError);
      expect(shellTemplateProblems(template, 's1', 'arguments.command')).toEqual([
        { code: 'ref_shell_context', stepId: 's1', field: 'arguments.command', params: { stepId: 's1', ref: '{{inputs.v}}', place: why } },
      ]);
    }
  });

  it('keeps placeholders after a here-document, a comment or an expansion usable', () => {
    expect(resolveShellTemplate('cat <<EOF\nbody\nEOF\necho {{inputs.v}}', scope({ v: 'a;b' }))).toBe("cat <<EOF\nbody\nEOF\necho 'a;b'");
    expect(resolveShellTemplate('echo # c\necho {{inputs.v}}', scope({ v: 'a;b' }))).toBe("echo # c\necho 'a;b'");
    expect(resolveShellTemplate('echo ${x:-a} $((1+2)) {{inputs.v}}', scope({ v: 'a;b' }))).toBe("echo ${x:-a} $((1+2)) 'a;b'");
    expect(resolveShellTemplate('echo {{ bad }} {{inputs.v}}', scope({ v: 'q' }))).toBe("echo {{ bad }} 'q'");
  });
});
