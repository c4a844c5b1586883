import type { Problem } from './errors';
import { parseReference, type ResolveScope, resolveText } from './references';

/**
 * References inside a shell command line. A tool argument that is shell source
 * (`execute_command.command`) is a template: every `{{…}}` placeholder in it becomes ONE shell word
 * holding the value as data, never shell syntax. `echo {{inputs.msg}}` with msg `a; id` runs
 * `echo 'a; id'`. The quoting depends on where the placeholder sits in the template:
 *
 *   unquoted              {{x}}        → 'value'  (each ' written as '\'')
 *   inside '…'            '…{{x}}…'    → value    (each ' written as '\'')
 *   inside "…"            "…{{x}}…"    → value    (\ $ ` " escaped with a backslash)
 *
 * Every other place is refused (`ref_shell_context`), at validation and again at dispatch:
 * after a backslash, inside `$'…'`, backticks, a `${…}` operand, arithmetic (`$((…))`, `$[…]`,
 * `((…))`), a comment, or a here-document body — places where a value would be read as code, or
 * could end the construct early. A whole-value placeholder (`"command": "{{inputs.cmd}}"`) is no
 * exception: it becomes one quoted word, a program name, so a value can never be a command line.
 * Pure: a template and the run's scope in, the rendered line out; the permission rules and the
 * floor then judge the rendered line like any other.
 */

/** Tool arguments that are shell source, by tool name. */
export const SHELL_TEMPLATE_ARGUMENTS: Readonly<Record<string, readonly string[]>> = {
  execute_command: ['command'],
};

/** Where a placeholder sits in a shell template. */
export type ShellSlotContext = 'unquoted' | 'single' | 'double';

/** One placeholder of a template: its span, and its quoting context or why it is refused. */
export interface ShellSlot {
  /** The placeholder's first character, as an index into the template. */
  start: number;
  /** The index just after its last character. */
  end: number;
  /** The placeholder as written, braces included. */
  raw: string;
  /** Its quoting context, when it is in a place a value may go. */
  context?: ShellSlotContext;
  /** Why it is refused (e.g. `after a backslash`), in words; absent when it is allowed. */
  refused?: string;
}

type Frame = ({ kind: 'normal'; parens: number; cases: number; closer: boolean } | { kind: 'double' } | { kind: 'refused'; why: string; close: string; depth: number }) & { at: number };

interface Hole {
  start: number;
  end: number;
  raw: string;
}

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;

/** Every `{{…}}` of `template` with its quoting context (a small bash quote-state scanner). */
export function shellSlots(template: string): ShellSlot[] {
  return new Scanner(template).run();
}

/** Constructs inside which a placeholder is refused: opener, closer, reason; `normal` only outside "…". */
const REFUSED: Array<{ open: string; close: string; why: string; normalOnly?: boolean }> = [
  { open: '$((', close: '))', why: 'inside arithmetic' },
  { open: '((', close: '))', why: 'inside arithmetic', normalOnly: true },
  { open: '$[', close: ']', why: 'inside arithmetic' },
  { open: '${', close: '}', why: 'inside a ${…} expansion' },
  { open: "$'", close: "'", why: "inside $'…'", normalOnly: true },
  { open: '`', close: '`', why: 'inside backticks' },
];

class Scanner {
  private readonly holes: Hole[];
  private readonly out: ShellSlot[] = [];
  private readonly stack: Frame[] = [{ kind: 'normal', parens: 0, cases: 0, closer: false, at: 0 }];
  private heredocs: string[] = [];
  private h = 0;
  private i = 0;

  constructor(private readonly t: string) {
    this.holes = [...t.matchAll(PLACEHOLDER)].map((m) => ({ start: m.index ?? 0, end: (m.index ?? 0) + m[0].length, raw: m[0] }));
  }

  run(): ShellSlot[] {
    const t = this.t;
    while (this.i < t.length) {
      const hole = this.holes[this.h];
      if (hole && this.i === hole.start) {
        const f = this.top();
        this.place(f.kind === 'refused' ? { refused: f.why } : { context: f.kind === 'double' ? 'double' : 'unquoted' });
        continue;
      }
      if (t[this.i] === '\\') {
        if (hole && this.i + 1 === hole.start) {
          this.i += 1;
          this.place({ refused: 'after a backslash' });
        } else this.i += 2;
        continue;
      }
      const f = this.top();
      if (f.kind === 'refused') this.refused(f);
      else if (f.kind === 'double') this.double();
      else this.normal(f);
    }
    this.refuseBefore(Number.POSITIVE_INFINITY, 'inside an unterminated construct');
    // a quote or construct left open: bash refuses the line, and so do we
    const openAt = Math.min(...this.stack.slice(1).map((f) => f.at));
    return this.out.map((s) => (s.start > openAt && !s.refused ? { start: s.start, end: s.end, raw: s.raw, refused: 'inside an unterminated construct' } : s));
  }

  private top(): Frame {
    return this.stack[this.stack.length - 1] as Frame;
  }

  private place(how: { context: ShellSlotContext } | { refused: string }): void {
    const hole = this.holes[this.h] as Hole;
    this.out.push({ ...hole, ...how });
    this.h += 1;
    this.i = hole.end;
  }

  /** Every placeholder starting before `pos` that was skipped over is refused with `why`. */
  private refuseBefore(pos: number, why: string): void {
    for (let hole = this.holes[this.h]; hole && hole.start < pos; hole = this.holes[this.h]) {
      this.out.push({ ...hole, refused: why });
      this.h += 1;
    }
  }

  /** Skips a quoted span starting at the quote at `i` (placeholders in it are refused with `why`, or single-quoted). */
  private skipQuoted(why?: string): void {
    const t = this.t;
    const q = t[this.i] as string;
    let j = this.i + 1;
    while (j < t.length && t[j] !== q) j += q === '"' && t[j] === '\\' ? 2 : 1;
    const end = Math.min(j, t.length);
    if (why === undefined) {
      // a single-quoted span of the template: a placeholder inside it renders as single-quoted text
      for (let hole = this.holes[this.h]; hole && hole.start < end; hole = this.holes[this.h]) {
        const closed = hole.end <= end && end < t.length;
        this.out.push({ ...hole, ...(closed ? { context: 'single' as const } : { refused: 'inside an unterminated construct' }) });
        this.h += 1;
      }
    } else this.refuseBefore(end, why);
    this.i = end + 1;
  }

  private openRefused(inDouble: boolean): boolean {
    for (const r of REFUSED) {
      if ((r.normalOnly && inDouble) || !this.t.startsWith(r.open, this.i)) continue;
      this.stack.push({ kind: 'refused', why: r.why, close: r.close, depth: 0, at: this.i });
      this.i += r.open.length;
      return true;
    }
    return false;
  }

  private refused(f: Extract<Frame, { kind: 'refused' }>): void {
    const t = this.t;
    const ch = t[this.i] as string;
    if (f.depth === 0 && t.startsWith(f.close, this.i)) {
      this.stack.pop();
      this.i += f.close.length;
      return;
    }
    if ((ch === "'" || ch === '"') && f.close !== ch && f.close !== '`') return this.skipQuoted(f.why);
    if (f.close === '}' && ch === '{') f.depth += 1;
    else if (f.close === '}' && ch === '}') f.depth -= 1;
    else if (f.close === '))' && ch === '(') f.depth += 1;
    else if (f.close === '))' && ch === ')') f.depth -= 1;
    this.i += 1;
  }

  private double(): void {
    const t = this.t;
    if (t[this.i] === '"') {
      this.stack.pop();
      this.i += 1;
    } else if (this.openRefused(true)) {
      // opened
    } else if (t.startsWith('$(', this.i)) {
      this.stack.push({ kind: 'normal', parens: 0, cases: 0, closer: true, at: this.i });
      this.i += 2;
    } else this.i += 1;
  }

  private normal(f: Extract<Frame, { kind: 'normal' }>): void {
    const t = this.t;
    const ch = t[this.i] as string;
    if (ch === "'") return this.skipQuoted();
    if (ch === '"') {
      this.stack.push({ kind: 'double', at: this.i });
      this.i += 1;
      return;
    }
    if (ch === '#' && (this.i === 0 || /[\s;&|()]/.test(t[this.i - 1] as string))) {
      const nl = t.indexOf('\n', this.i);
      const end = nl < 0 ? t.length : nl;
      this.refuseBefore(end, 'inside a comment');
      this.i = end;
      return;
    }
    if (t.startsWith('<<', this.i) && t[this.i + 2] !== '<') {
      const m = /^<<-?[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([^\s;&|<>()]+))/.exec(t.slice(this.i));
      if (m) {
        this.heredocs.push(m[1] ?? m[2] ?? m[3] ?? '');
        this.i += m[0].length;
        return;
      }
    }
    if (ch === '\n' && this.heredocs.length > 0) return this.skipHeredocs();
    if (this.openRefused(false)) return;
    if (t.startsWith('$(', this.i)) {
      this.stack.push({ kind: 'normal', parens: 0, cases: 0, closer: true, at: this.i });
      this.i += 2;
      return;
    }
    // `case … in a) …;; esac`: a pattern's `)` does not close a `$(`
    const word = /^(case|esac)(?=[\s;&|()]|$)/.exec(t.slice(this.i));
    if (word && (this.i === 0 || /[\s;&|()]/.test(t[this.i - 1] as string))) {
      f.cases = Math.max(0, f.cases + (word[1] === 'case' ? 1 : -1));
      this.i += 4;
      return;
    }
    if (ch === '(') f.parens += 1;
    else if (ch === ')') {
      if (f.parens > 0) f.parens -= 1;
      else if (f.closer && f.cases === 0) this.stack.pop();
    }
    this.i += 1;
  }

  /** Here-document bodies start after the newline that ends their command line. */
  private skipHeredocs(): void {
    const t = this.t;
    let i = this.i + 1;
    for (const delimiter of this.heredocs) {
      for (;;) {
        const nl = t.indexOf('\n', i);
        const line = t.slice(i, nl < 0 ? t.length : nl);
        i = nl < 0 ? t.length : nl + 1;
        if (line.replace(/^\t+/, '') === delimiter || nl < 0) break;
      }
    }
    this.heredocs = [];
    this.refuseBefore(i, 'inside a here-document');
    this.i = i;
  }
}

/** A value as one piece of shell text in `context`. */
export function shellQuote(text: string, context: ShellSlotContext): string {
  if (context === 'double') return text.replace(/[\\$`"]/g, '\\$&');
  const inner = text.replaceAll("'", "'\\''");
  return context === 'single' ? inner : `'${inner}'`;
}

/** Thrown at dispatch when a template holds a placeholder where no quoting makes a value data. */
export class ShellTemplateError extends Error {
  constructor(
    readonly ref: string,
    readonly why: string,
  ) {
    super(`reference ${ref} sits ${why} in a shell command; a value there would be read as code`);
    this.name = 'ShellTemplateError';
  }
}

/**
 * Renders a shell template: each well-formed placeholder becomes its value quoted for its
 * context (strings as they are, anything else as JSON); a malformed one stays as written.
 * Throws `ShellTemplateError` (a refused place) or `UnresolvedReferenceError`.
 */
export function resolveShellTemplate(template: string, scope: ResolveScope): string {
  let out = '';
  let at = 0;
  for (const slot of shellSlots(template)) {
    const parsed = parseReference(slot.raw.slice(2, -2), slot.raw);
    if (!parsed.ok) continue;
    if (slot.refused) throw new ShellTemplateError(slot.raw, slot.refused);
    out += template.slice(at, slot.start) + shellQuote(resolveText(parsed.ref, scope), slot.context ?? 'unquoted');
    at = slot.end;
  }
  return out + template.slice(at);
}

/** Validation: every well-formed placeholder of a shell template in a refused place (`ref_shell_context`). */
export function shellTemplateProblems(template: string, stepId: string, field: string): Problem[] {
  return shellSlots(template)
    .filter((s) => s.refused && parseReference(s.raw.slice(2, -2), s.raw).ok)
    .map((s) => ({ code: 'ref_shell_context', stepId, field, params: { stepId, ref: s.raw, place: s.refused as string } }));
}
