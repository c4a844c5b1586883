import type { SegmentWords } from './rules';
import type { BashParser, SyntaxNode } from './shell-parser';
import {
  ARITHMETIC_REASON,
  builtinProblem,
  declarationProblem,
  expansionProblem,
  isArithmeticTestOperator,
  literalArithmetic,
  quotedHeredocDelimiter,
  safeSubscript,
  safeVariableName,
  unparsedSubstitution,
} from './hidden-code';
import { isSensitiveVariable, isStartupPath, type Words, unwrap } from './wrappers';

/**
 * Splits a command line into every command a shell would run (shell chains are
 * checked per segment), using the tree-sitter bash grammar: lists, pipelines, `&`, newlines,
 * subshells, `$(…)`, backticks, `<(…)`, here-docs, compound statements, function bodies,
 * `sh -c` / `eval` payloads (parsed again) and wrappers (`env`, `nice`, `xargs`, `find -exec`…).
 *
 * Whatever it cannot account for makes the analysis "opaque": a parse error, an unknown node,
 * an expansion or glob in command position, a non-ASCII command name, a sensitive environment
 * assignment (PATH=…), a line continuation that joins words. Opaque commands are never allowed
 * by a rule.
 */

export interface Segment extends SegmentWords {
  /** Each program of the segment as written, outermost wrapper first; the last is `words`. */
  layers: SegmentWords[];
  /** How the segment was reached: `$(…)`, `sh -c`, `xargs`, `find -exec`, … (outermost first). */
  via: string[];
  /** Why this segment cannot be fully analysed. */
  opaque?: string;
}

export interface ShellAnalysis {
  source: string;
  segments: Segment[];
  /** Reasons the command as a whole (or a part of it) cannot be accounted for. */
  opaque: string[];
  /** Redirections to a device (`> /dev/sda`), for the floor. */
  deviceWrites: string[];
}

const MAX_DEPTH = 8;
const MAX_SOURCE = 64 * 1024;

/** Node types that only group other nodes; their children are walked. */
const GROUPING = new Set([
  'program', 'list', 'pipeline', 'subshell', 'compound_statement', 'redirected_statement', 'negated_command',
  'if_statement', 'elif_clause', 'else_clause', 'while_statement', 'for_statement', 'c_style_for_statement',
  'do_group', 'case_statement', 'case_item', 'function_definition', 'test_command', 'variable_assignments',
  'heredoc_redirect', 'heredoc_body', 'herestring_redirect', 'file_redirect', 'string', 'translated_string',
  'concatenation', 'expansion', 'simple_expansion', 'arithmetic_expansion', 'binary_expression',
  'unary_expression', 'ternary_expression', 'postfix_expression', 'parenthesized_expression', 'subscript',
  'array', 'command_name', 'brace_expression',
]);
/** Leaves that run nothing. */
const LEAVES = new Set([
  'word', 'raw_string', 'string_content', 'number', 'variable_name', 'special_variable_name', 'ansi_c_string',
  'file_descriptor', 'heredoc_start', 'heredoc_content', 'heredoc_end', 'test_operator', 'regex',
  'extglob_pattern', 'comment',
]);

/** The pure analysis: parse `source` with `parser` and collect every segment. */
export function analyzeShell(parser: BashParser, source: string): ShellAnalysis {
  const out: ShellAnalysis = { source, segments: [], opaque: [], deviceWrites: [] };
  analyzeInto(parser, source, { via: [], layers: [], depth: 0 }, out);
  if (out.segments.length === 0 && out.opaque.length === 0) out.opaque.push('no command to run');
  return out;
}

interface Scope {
  via: string[];
  layers: SegmentWords[];
  depth: number;
}

function analyzeInto(parser: BashParser, source: string, scope: Scope, out: ShellAnalysis): void {
  if (scope.depth > MAX_DEPTH) return void out.opaque.push('commands nested too deeply');
  if (source.length > MAX_SOURCE) return void out.opaque.push('command longer than 64 KiB');
  if (source.includes('\0')) return void out.opaque.push('NUL byte in the command');
  // bash joins `a\<newline>b` into one word; the grammar splits it: never trust such a line.
  if (/[^\s\\]\\\r?\n[^\s]/.test(source)) out.opaque.push('a line continuation joins two words');
  parser.parse(source, (root) => {
    if (root.hasError) out.opaque.push('the shell grammar cannot parse the command');
    walk(root, scope, out, parser);
  });
}

/** Syntax nesting deeper than this is refused (and keeps the walk's recursion bounded). */
const MAX_NESTING = 200;

function walk(node: SyntaxNode, scope: Scope, out: ShellAnalysis, parser: BashParser, level = 0): void {
  if (level > MAX_NESTING) {
    if (!out.opaque.includes('syntax nested too deeply')) out.opaque.push('syntax nested too deeply');
    return;
  }
  if (node.isMissing || node.type === 'ERROR') return void out.opaque.push(`unparsable text near "${clip(node.text)}"`);
  if (!node.isNamed) return;
  switch (node.type) {
    case 'command':
      return command(node, scope, out, parser, level);
    case 'declaration_command':
    case 'unset_command':
      return declaration(node, scope, out, parser, level);
    case 'variable_assignment':
      checkAssignment(node, out);
      return walkChildren(node, scope, out, parser, level);
    case 'command_substitution':
      // The grammar reads `$((…))` inside a here-document as `$( (…) )`; bash reads arithmetic.
      if (node.text.startsWith('$((')) {
        const inner = node.text.slice(3, -2);
        if (literalArithmetic(inner)) return;
        checkArithmetic(inner, out);
      }
      return walkChildren(node, { ...scope, via: [...scope.via, '$(…)'] }, out, parser, level);
    case 'process_substitution':
      return walkChildren(node, { ...scope, via: [...scope.via, '<(…)'] }, out, parser, level);
    case 'file_redirect':
      checkRedirect(node, out);
      return walkChildren(node, scope, out, parser, level);
    case 'arithmetic_expansion':
      checkArithmetic(node.text.replace(/^\$(\(\(|\[)/, '').replace(/(\)\)|\])$/, ''), out);
      return walkChildren(node, scope, out, parser, level);
    case 'compound_statement':
      if (node.child(0)?.type === '((') checkArithmetic(node.text.slice(2, -2), out);
      return walkChildren(node, scope, out, parser, level);
    case 'c_style_for_statement':
      for (const part of node.namedChildren) if (part && part.type !== 'do_group' && part.type !== 'compound_statement') checkArithmetic(part.text, out);
      return walkChildren(node, scope, out, parser, level);
    case 'expansion':
      checkExpansion(node, out);
      return walkChildren(node, scope, out, parser, level);
    case 'array':
      checkArray(node, out);
      return walkChildren(node, scope, out, parser, level);
    case 'subscript':
      checkSubscript(node, out);
      return walkChildren(node, scope, out, parser, level);
    case 'test_command':
      checkTest(node, out);
      return walkChildren(node, scope, out, parser, level);
    case 'heredoc_redirect':
      checkHeredoc(node, scope, out, parser);
      return walkChildren(node, scope, out, parser, level);
    default:
      if (GROUPING.has(node.type)) return walkChildren(node, scope, out, parser, level);
      if (LEAVES.has(node.type)) return checkLeaf(node, scope, out, parser);
      out.opaque.push(`unsupported shell construct "${node.type}"`);
  }
}

function walkChildren(node: SyntaxNode, scope: Scope, out: ShellAnalysis, parser: BashParser, level: number): void {
  for (const child of node.children) if (child) walk(child, scope, out, parser, level + 1);
}

function command(node: SyntaxNode, scope: Scope, out: ShellAnalysis, parser: BashParser, level: number): void {
  const words: Word[] = [];
  let opaque: string | undefined;
  for (const child of node.namedChildren) {
    if (!child) continue;
    walk(child, scope, out, parser, level + 1);
    if (child.type === 'variable_assignment') {
      const name = child.childForFieldName('name')?.text ?? child.namedChildren[0]?.text ?? '';
      if (isSensitiveVariable(name)) opaque = `the command sets ${name}, which changes what it runs`;
    } else if (!REDIRECTS.has(child.type)) {
      const word = child.type === 'command_name' ? commandName(child) : evalWord(child);
      // `{name}>file` stores a descriptor in a variable: its subscript is evaluated.
      if (words.length > 0 && /^\{[^,]+\}$/.test(child.text) && !child.text.includes('..') && (word.dynamic || !safeVariableName(word.value.slice(1, -1)))) {
        pushOnce(out, `the descriptor variable "${clip(child.text)}" has a subscript, which can run code`);
      }
      words.push(word);
    }
  }
  if (words.length === 0) return;
  const seg: Words = { words: words.map((w) => w.value), dynamic: words.map((w) => w.dynamic), trailingDynamic: false };
  const problem = opaque ?? commandWordProblem(words[0] as Word);
  if (problem) seg.words[0] = (seg.words[0] as string).normalize('NFKC');
  expand(seg, problem, scope, out, parser);
}

const REDIRECTS = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

function commandName(node: SyntaxNode): Word {
  const parts = node.namedChildren.filter((c): c is SyntaxNode => c !== null).map(evalWord);
  return {
    value: parts.map((p) => p.value).join(''),
    dynamic: parts.some((p) => p.dynamic),
    glob: parts.some((p) => p.glob),
  };
}

/** Applies wrappers and inline shells; pushes the resulting segments. */
function expand(seg: Words, opaque: string | undefined, scope: Scope, out: ShellAnalysis, parser: BashParser): void {
  if (scope.depth > MAX_DEPTH) return void out.opaque.push('commands nested too deeply');
  const layers = [...scope.layers, seg];
  const u = opaque ? ({ kind: 'plain' } as const) : unwrap(seg);
  switch (u.kind) {
    case 'plain': {
      const setter = opaque ?? setsSensitiveVariable(seg) ?? builtinProblem(seg);
      out.segments.push({ ...seg, layers, via: scope.via, ...(setter ? { opaque: setter } : {}) });
      return;
    }
    case 'opaque':
      out.segments.push({ ...seg, layers, via: scope.via, opaque: u.reason });
      return;
    case 'wrap': {
      const first = u.inner.words[0] ?? '';
      const problem = u.inner.dynamic[0] ? `expansion in command position after "${u.via}"` : innerWordProblem(first);
      return expand(u.inner, problem, { via: [...scope.via, u.via], layers, depth: scope.depth + 1 }, out, parser);
    }
    case 'shell':
      if (u.payload === undefined) {
        out.segments.push({ ...seg, layers, via: scope.via, opaque: `"${u.via}" runs shell code known only at run time` });
        return;
      }
      return analyzeInto(parser, u.payload, { via: [...scope.via, u.via], layers, depth: scope.depth + 1 }, out);
    case 'spawns':
      out.segments.push({ ...seg, layers, via: scope.via });
      for (const inner of u.commands) {
        const problem = inner.dynamic[0] ? `expansion in command position after "${u.via}"` : innerWordProblem(inner.words[0] ?? '');
        expand(inner, problem, { via: [...scope.via, u.via], layers: [], depth: scope.depth + 1 }, out, parser);
      }
      for (const payload of u.shells ?? []) {
        if (payload === undefined) out.segments.push({ ...seg, layers, via: scope.via, opaque: `"${u.via}" runs shell code known only at run time` });
        else analyzeInto(parser, payload, { via: [...scope.via, u.via], layers: [], depth: scope.depth + 1 }, out);
      }
  }
}

function declaration(node: SyntaxNode, scope: Scope, out: ShellAnalysis, parser: BashParser, level: number): void {
  const words: Word[] = [{ value: node.child(0)?.text ?? node.type, dynamic: false, glob: false }];
  let opaque: string | undefined;
  for (const child of node.namedChildren) {
    if (!child) continue;
    walk(child, scope, out, parser, level + 1);
    if (child.type === 'variable_assignment') {
      const name = child.childForFieldName('name')?.text ?? child.namedChildren[0]?.text ?? '';
      if (isSensitiveVariable(name)) opaque = `"${words[0]?.value}" sets ${name}, which changes what later commands run`;
      words.push({ value: child.text, dynamic: /[$`]/.test(child.text), glob: false });
    } else if (child.type === 'variable_name') words.push({ value: child.text, dynamic: false, glob: false });
    else words.push(evalWord(child));
  }
  const seg: Words = { words: words.map((w) => w.value), dynamic: words.map((w) => w.dynamic), trailingDynamic: false };
  opaque ??= node.type === 'unset_command' ? builtinProblem(seg) : declarationProblem(seg);
  out.segments.push({ ...seg, layers: [...scope.layers, seg], via: scope.via, ...(opaque ? { opaque } : {}) });
}

/** Builtins that assign variables named by their arguments. */
const VAR_SETTERS = new Set(['read', 'printf', 'getopts', 'mapfile', 'readarray', 'let', 'export', 'declare', 'typeset', 'local', 'readonly']);

function setsSensitiveVariable(seg: Words): string | undefined {
  if (!VAR_SETTERS.has(seg.words[0] ?? '')) return undefined;
  const name = seg.words.slice(1).find((w, i) => !seg.dynamic[i + 1] && isSensitiveVariable(w.split(/[=[]/)[0] ?? ''));
  return name ? `"${seg.words[0]}" may set ${name.split(/[=[]/)[0]}, which changes what later commands run` : undefined;
}

function checkAssignment(node: SyntaxNode, out: ShellAnalysis): void {
  const name = node.childForFieldName('name')?.text ?? node.namedChildren[0]?.text ?? '';
  if (isSensitiveVariable(name)) out.opaque.push(`assigns ${name}, which changes what later commands run`);
}

function checkArithmetic(text: string, out: ShellAnalysis): void {
  if (!literalArithmetic(text)) pushOnce(out, `${ARITHMETIC_REASON} ("${clip(text.trim())}")`);
}

function checkExpansion(node: SyntaxNode, out: ShellAnalysis): void {
  const first = node.child(1);
  const prefix = first && !first.isNamed && (first.type === '!' || first.type === '#') ? first.type : '';
  const param = node.namedChildren.find((c) => c && ['variable_name', 'special_variable_name', 'subscript'].includes(c.type));
  if (!param) return pushOnce(out, `unsupported expansion "${clip(node.text)}"`);
  const problem = expansionProblem(node.text, prefix, param.text, isSensitiveVariable);
  if (problem) pushOnce(out, problem);
  // The grammar leaves a `${x%%pattern}` / `${x/pattern/…}` pattern unparsed: an expansion in it is unseen.
  for (const c of node.namedChildren) {
    if (c?.type === 'regex' && /[$`]/.test(c.text)) pushOnce(out, `an expansion inside the pattern of "${clip(node.text)}" is not parsed`);
  }
}

/** `a=([i]=1)`: the subscripts of an indexed array's compound assignment are arithmetic. */
function checkArray(node: SyntaxNode, out: ShellAnalysis): void {
  for (const c of node.namedChildren) {
    if (!c) continue;
    const m = /^\[([^\]]*)\]\+?=/.exec(c.text);
    if (m && !safeSubscript(m[1] as string)) pushOnce(out, `the subscript of "${clip(c.text)}" is arithmetic, which can run code hidden in a value`);
  }
}

function checkSubscript(node: SyntaxNode, out: ShellAnalysis): void {
  const text = node.text;
  const open = text.indexOf('[');
  if (open < 0 || !text.endsWith(']') || !safeSubscript(text.slice(open + 1, -1))) {
    pushOnce(out, `the subscript of "${clip(text)}" is arithmetic, which can run code hidden in a value`);
  }
}

/** `[[ a -eq b ]]` evaluates both operands as arithmetic; `[[ -v name ]]` evaluates a subscript. */
function checkTest(node: SyntaxNode, out: ShellAnalysis): void {
  const visit = (n: SyntaxNode) => {
    if (n.type === 'command_substitution' || n.type === 'process_substitution') return;
    if (n.type === 'binary_expression' || n.type === 'unary_expression') {
      const op = n.namedChildren.find((c) => c?.type === 'test_operator')?.text ?? '';
      const operands = n.namedChildren.filter((c): c is SyntaxNode => c !== null && c.type !== 'test_operator');
      if (isArithmeticTestOperator(op)) {
        for (const o of operands) {
          const w = evalWord(o);
          if (w.dynamic || !literalArithmetic(w.value)) pushOnce(out, `"[[ … ${op} … ]]": ${ARITHMETIC_REASON}`);
        }
      } else if (op === '-v' || op === '-R') {
        const w = operands[0] ? evalWord(operands[0]) : undefined;
        if (!w || w.dynamic || !safeVariableName(w.value)) pushOnce(out, `"[[ ${op} … ]]" evaluates a subscript, which can run code`);
      }
    }
    for (const c of n.namedChildren) if (c) visit(c);
  };
  visit(node);
  if (/(^|\s)-(eq|ne|lt|le|gt|ge|v|R)(\s|$)/.test(node.text) && !node.descendantsOfType('test_operator').some((t) => t && /^-(eq|ne|lt|le|gt|ge|v|R)$/.test(t.text))) {
    pushOnce(out, 'a test the shell grammar does not fully account for');
  }
}

/** Leaves whose text bash still expands (where the grammar missed a substitution). */
const EXPANDED_LEAVES = new Set(['word', 'regex', 'extglob_pattern', 'string_content', 'heredoc_content']);

/**
 * A leaf holding an unparsed substitution (`${x:-`id`}`, `${x:-<(curl …)}`, `"${x-'$(id)'}"`,
 * where single quotes inside a double-quoted `${…}` are literal): opaque, and its text is parsed
 * again so deny rules and the floor still see the commands in it.
 */
function checkLeaf(node: SyntaxNode, scope: Scope, out: ShellAnalysis, parser: BashParser): void {
  const operand = insideExpansion(node);
  // single quotes are literal inside a double-quoted `${…}` only
  if (!EXPANDED_LEAVES.has(node.type) && !(operand === 'quoted' && node.type === 'raw_string')) return;
  if (node.type === 'heredoc_content' && !expandedHeredoc(node.parent?.parent)) return;
  const text = node.type === 'raw_string' ? node.text.slice(1, -1) : node.text;
  unparsed(text, operand !== undefined || node.type === 'word', scope, out, parser);
}

/** An unquoted here-document's body is expanded; the grammar leaves backticks in it unparsed. */
function checkHeredoc(node: SyntaxNode, scope: Scope, out: ShellAnalysis, parser: BashParser): void {
  const body = node.namedChildren.find((c) => c?.type === 'heredoc_body');
  if (!body || !expandedHeredoc(node)) return;
  // text the grammar did not split into children (a body without `$…` has no children at all)
  if (body.namedChildren.length === 0) unparsed(body.text, false, scope, out, parser);
}

function expandedHeredoc(redirect: SyntaxNode | null | undefined): boolean {
  const start = redirect?.namedChildren.find((c) => c?.type === 'heredoc_start');
  return !!start && !quotedHeredocDelimiter(start.text);
}

function unparsed(text: string, process: boolean, scope: Scope, out: ShellAnalysis, parser: BashParser): void {
  const found = unparsedSubstitution(text, process);
  if (!found) return;
  pushOnce(out, `a "${found}" substitution the shell grammar does not parse (in "${clip(text.trim())}")`);
  analyzeInto(parser, `: ${text}`, { ...scope, via: [...scope.via, '${…}'], depth: scope.depth + 1 }, out);
}

/** Whether a node lies in the operand of a `${…}`, and whether that is double-quoted. */
function insideExpansion(node: SyntaxNode): 'quoted' | 'unquoted' | undefined {
  let found: 'quoted' | 'unquoted' | undefined;
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === 'expansion') found ??= 'unquoted';
    else if (found && (p.type === 'string' || p.type === 'heredoc_body')) return 'quoted';
    if (p.type === 'command' || p.type === 'command_substitution' || p.type === 'process_substitution' || p.type === 'program') return found;
  }
  return found;
}

function pushOnce(out: ShellAnalysis, reason: string): void {
  if (!out.opaque.includes(reason)) out.opaque.push(reason);
}

const SAFE_DEVICES = /^\/dev\/(null|zero|stdout|stderr|stdin|tty|fd\/\d+|full|random|urandom)$/;

function checkRedirect(node: SyntaxNode, out: ShellAnalysis): void {
  const op = node.children.find((c) => c && !c.isNamed)?.text ?? '';
  if (op.startsWith('<') && !op.includes('>')) return;
  const target = node.namedChildren.find((c) => c && c.type !== 'file_descriptor');
  if (!target) return;
  const w = evalWord(target);
  if (!w.dynamic && w.value.startsWith('/dev/') && !SAFE_DEVICES.test(w.value)) out.deviceWrites.push(w.value);
  // a run-time value keeps its source text (`~/.bashrc`, `$HOME/.bashrc`): checked as written
  if (isStartupPath(w.value)) out.deviceWrites.push(w.value);
}

interface Word {
  value: string;
  dynamic: boolean;
  /** Unquoted glob or brace characters: the shell may turn the word into other words. */
  glob: boolean;
}

/** The value a word has after quote removal, or its source text when known only at run time. */
export function evalWord(node: SyntaxNode): Word {
  switch (node.type) {
    case 'word':
      return unquotedWord(node.text);
    case 'raw_string':
      return { value: node.text.slice(1, -1), dynamic: false, glob: false };
    case 'number':
      return { value: node.text, dynamic: false, glob: false };
    case 'string':
    case 'translated_string': {
      let value = '';
      let dynamic = node.type === 'translated_string';
      for (const c of node.namedChildren) {
        if (!c) continue;
        if (c.type === 'string_content') value += c.text.replace(/\\([$`"\\\n])/g, (_m, ch: string) => (ch === '\n' ? '' : ch));
        else if (c.type === 'string') value += evalWord(c).value;
        else {
          value += c.text;
          dynamic = true;
        }
      }
      return { value, dynamic, glob: false };
    }
    case 'concatenation': {
      const parts = node.namedChildren.filter((c): c is SyntaxNode => c !== null).map(evalWord);
      return { value: parts.map((p) => p.value).join(''), dynamic: parts.some((p) => p.dynamic), glob: parts.some((p) => p.glob) };
    }
    default:
      return { value: node.text, dynamic: true, glob: node.type === 'brace_expression' || node.type === 'extglob_pattern' };
  }
}

function unquotedWord(text: string): Word {
  let value = '';
  let glob = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\' && i + 1 < text.length) {
      value += text[i + 1];
      i += 1;
      continue;
    }
    if ('*?['.includes(ch)) glob = true;
    if (ch === '{' && /[,]|\.\./.test(text.slice(i))) glob = true;
    value += ch;
  }
  return { value, dynamic: text.startsWith('~'), glob };
}

function commandWordProblem(word: Word): string | undefined {
  if (word.dynamic) return 'expansion in command position';
  if (word.glob) return 'glob or brace pattern in command position';
  return asciiProblem(word.value);
}

function asciiProblem(name: string): string | undefined {
  if (name === '') return 'empty command name';
  if (name.normalize('NFKC') !== name || /[^\x21-\x7e]/.test(name)) return 'non-ASCII or invisible characters in the command name';
  return undefined;
}

/** A wrapped command's name is a plain word already unquoted: a glob there is literal to us only. */
function innerWordProblem(name: string): string | undefined {
  if (/[*?[{]/.test(name)) return 'glob or brace pattern in command position';
  return asciiProblem(name);
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
