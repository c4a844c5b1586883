import type { Words } from './wrappers';

/**
 * Places where bash runs code that is not written as a command: arithmetic evaluates variable
 * names recursively and expands array subscripts (`x='a[$(id)]'; echo $((x))` runs `id`),
 * `${x@P}` expands a prompt string, `${!x}` names a variable through a value, and builtins that
 * take a variable name (`printf -v`, `read`, `test -v`, `declare`, `let`, …) evaluate its
 * subscript. A command line is fully understood only when every such place holds literal text
 * that cannot run anything: digits and operators for arithmetic, a plain name (with a numeric,
 * `@` or `*` subscript) for a variable name. Anything else makes the line opaque (never allowed
 * by a rule). Pure: text and words in, a reason or undefined out.
 */

/** Arithmetic that can only compute: numbers, operators, `$#`, `$?`, `$$`, `$!`. */
const LITERAL_ARITHMETIC = /^(?:\s|\d[\w#@]*|\$[#?$!]|[-+*/%<>=!&|^~?:,()])*$/;

export function literalArithmetic(text: string): boolean {
  return LITERAL_ARITHMETIC.test(text);
}

export const ARITHMETIC_REASON = 'arithmetic on a variable or an expansion can run code hidden in its value';

/** A variable name whose subscript (if any) cannot run code. */
const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\[(\d+|@|\*)\])?$/;

export function safeVariableName(name: string): boolean {
  return SAFE_NAME.test(name);
}

/** A subscript `[…]` is safe when it is a number, `@` or `*`. */
export function safeSubscript(index: string): boolean {
  return /^\s*(\d+|@|\*)\s*$/.test(index);
}

/** `${x@op}` transformations that only quote or change case; `P` (prompt expansion) runs code. */
const SAFE_TRANSFORMS = new Set(['Q', 'E', 'A', 'a', 'U', 'u', 'L', 'K', 'k']);

/**
 * One `${…}` expansion, given its text, its prefix (`!`, `#` or none) and its parameter's text
 * (`x`, `a[0]`, `@`): the reason it can run code, if it can.
 */
export function expansionProblem(text: string, prefix: string, name: string, sensitive: (name: string) => boolean): string | undefined {
  if (prefix === '!') {
    if (/^\$\{![A-Za-z_]\w*[*@]\}$/.test(text) || /^\$\{![A-Za-z_]\w*\[[@*]\]\}$/.test(text)) return undefined;
    return `indirect expansion "${clip(text)}" can run code hidden in a variable's value`;
  }
  const rest = text.slice(2 + prefix.length + name.length, -1);
  if (rest.startsWith('@')) {
    const op = rest.slice(1);
    if (SAFE_TRANSFORMS.has(op)) return undefined;
    return `"${clip(text)}" expands a value as a prompt string, which runs the commands in it`;
  }
  if (rest.startsWith(':') && !/^:[-=?+]/.test(rest)) {
    if (!literalArithmetic(rest.slice(1))) return `the offset of "${clip(text)}" is arithmetic, which can run code hidden in a value`;
  }
  if (/^:?=/.test(rest) && sensitive(name.replace(/\[.*$/, ''))) return `"${clip(text)}" assigns ${name}, which changes what later commands run`;
  return undefined;
}

const ARITH_TEST_OPS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
export function isArithmeticTestOperator(op: string): boolean {
  return ARITH_TEST_OPS.has(op);
}

/**
 * Builtins (by the name they were invoked with) whose arguments name variables or hold
 * arithmetic: the reason the invocation can run code, if it can.
 */
export function builtinProblem(seg: Words): string | undefined {
  const [name, ...args] = seg.words;
  const dyn = (i: number) => seg.dynamic[i + 1] === true;
  const badName = (i: number, what: string): string | undefined => {
    if (dyn(i)) return `"${name}" takes a variable name known only at run time (${what}), whose subscript can run code`;
    const n = args[i] ?? '';
    return safeVariableName(n) ? undefined : `"${name}" evaluates the subscript of "${clip(n)}" (${what}), which can run code`;
  };
  switch (name) {
    case 'test':
    case '[':
      for (let i = 0; i < args.length; i++) {
        if ((args[i] === '-v' || args[i] === '-R') && !dyn(i) && i + 1 < args.length) {
          const p = badName(i + 1, args[i] as string);
          if (p) return p;
        }
      }
      return undefined;
    case 'printf':
      for (let i = 0; i < args.length; i++) {
        if (dyn(i)) return undefined; // the format is reached: no more options
        const a = args[i] as string;
        if (a === '--') return undefined;
        if (a === '-v') return badName(i + 1, '-v');
        if (a.startsWith('-v')) return safeVariableName(a.slice(2)) ? undefined : `"printf" evaluates the subscript of "${clip(a.slice(2))}" (-v), which can run code`;
        if (!a.startsWith('-')) return undefined;
      }
      return undefined;
    case 'read':
      return namesAfterOptions(seg, ['-a', '-d', '-i', '-n', '-N', '-p', '-t', '-u'], ['-a'], badName);
    case 'mapfile':
    case 'readarray':
      return namesAfterOptions(seg, ['-d', '-n', '-O', '-s', '-u', '-C', '-c'], [], badName);
    case 'getopts':
      return args.length >= 2 ? badName(1, 'getopts') : undefined;
    case 'wait':
      for (let i = 0; i < args.length; i++) if (args[i] === '-p') return badName(i + 1, '-p');
      return undefined;
    case 'let':
      for (let i = 0; i < args.length; i++) {
        if (dyn(i)) return `"let" evaluates arithmetic known only at run time`;
        const m = /^\s*([A-Za-z_]\w*)\s*(?:[-+*/%&^|]|<<|>>)?=(.*)$/s.exec(args[i] as string);
        if (!literalArithmetic(m ? (m[2] as string) : (args[i] as string))) return `"let ${clip(args[i] as string)}": ${ARITHMETIC_REASON}`;
      }
      return undefined;
    case 'declare':
    case 'typeset':
    case 'local':
    case 'export':
    case 'readonly':
      return declarationProblem(seg);
    case 'unset':
      for (let i = 0; i < args.length; i++) {
        if (!dyn(i) && (args[i] as string).startsWith('-')) continue;
        const p = badName(i, 'unset');
        if (p) return p;
      }
      return undefined;
    case 'compgen':
    case 'complete':
      if (args.some((a, i) => !dyn(i) && /^-[A-Za-z]*W/.test(a))) return `"${name} -W" expands its word list as shell code`;
      return undefined;
    default:
      return undefined;
  }
}

/** Positional names after options (`valued` options consume the next word; `named` ones name a variable). */
function namesAfterOptions(
  seg: Words,
  valued: string[],
  named: string[],
  badName: (i: number, what: string) => string | undefined,
): string | undefined {
  const args = seg.words.slice(1);
  let i = 0;
  while (i < args.length) {
    if (seg.dynamic[i + 1]) return badName(i, 'an argument');
    const a = args[i] as string;
    if (a === '--') {
      i += 1;
      break;
    }
    if (!a.startsWith('-') || a === '-') break;
    const opt = a.slice(0, 2);
    if (valued.includes(opt)) {
      if (named.includes(opt)) {
        const p = a.length > 2 ? (safeVariableName(a.slice(2)) ? undefined : `"${seg.words[0]}" evaluates the subscript of "${clip(a.slice(2))}"`) : badName(i + 1, opt);
        if (p) return p;
      }
      i += a.length > 2 ? 1 : 2;
    } else i += 1;
  }
  for (; i < args.length; i++) {
    const p = badName(i, 'a variable name');
    if (p) return p;
  }
  return undefined;
}

/**
 * `declare`/`typeset`/`local`/`export`/`readonly` words (as the segment sees them): `-n` (a
 * name reference resolves a name, subscript included, at every use) and `-i` (every later
 * assignment is arithmetic) are refused; each `name=value` must name a safe variable, and a
 * quoted compound value `x=(…)` is expanded again by bash.
 */
export function declarationProblem(seg: Words): string | undefined {
  const [name, ...args] = seg.words;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (seg.dynamic[i + 1] && !/^[A-Za-z_]\w*(\[[^\]]*\])?\+?=/.test(a)) return `"${name}" takes an argument known only at run time, which can name a variable with a subscript`;
    if (/^[-+][A-Za-z]+$/.test(a)) {
      if (/[ni]/.test(a)) return `"${name} ${a}" makes later uses of the variable evaluate code-capable text`;
      continue;
    }
    const eq = a.search(/\+?=/);
    const target = eq < 0 ? a : a.slice(0, eq);
    if (!safeVariableName(target)) return `"${name}" evaluates the subscript of "${clip(target)}", which can run code`;
    if (eq >= 0 && /^\+?=\(/.test(a.slice(eq)) && /[$`[]/.test(a)) return `"${name}" expands the compound value of "${clip(a)}" again`;
  }
  return undefined;
}

/**
 * Text the bash grammar left as a plain leaf although bash expands it: the operand of a `${x:-…}`
 * (and every other parameter-expansion operator), an unquoted here-document's body, a word.
 * tree-sitter-bash does not parse a backtick substitution there (`${x:-`id`}`, `<<EOF` … `` `id` ``),
 * nor a process substitution in an operand (`${x:-<(curl …)}`). The first unescaped substitution
 * start in `text` (`` ` ``, `$(`, `$[`, `${`, and with `process` also `<(` / `>(`), if any.
 */
export function unparsedSubstitution(text: string, process: boolean): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\') {
      i += 1;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (ch === '`' || two === '$(' || two === '$[' || two === '${') return ch === '`' ? ch : two;
    if (process && (two === '<(' || two === '>(')) return two;
  }
  return undefined;
}

/** A here-document delimiter written with any quoting (`'EOF'`, `"EOF"`, `\EOF`): its body is not expanded. */
export function quotedHeredocDelimiter(start: string): boolean {
  return /['"\\]/.test(start);
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
