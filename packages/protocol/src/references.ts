/**
 * The reference grammar and its resolver, shared by the host runner and the canvas.
 *
 *   {{steps.N.result<path>}}   N = 1-based position in the plan
 *   {{node.<id>.result<path>}} by step id
 *   {{node.<id>.error<path>}}  a failed step's `{code, message}` (null when it did not fail)
 *   {{last.result<path>}}      the latest (plan order) direct dependency
 *   {{inputs.<name><path>}}    workflow inputs
 *   {{item<path>}}             inside a forEach body: the current element
 *   {{index}}                  inside a forEach body: its 0-based position
 *   {{secrets.<NAME>}}         a vault secret (tool-step arguments only; substituted at dispatch)
 *   @file:<input>              a file input (a whole string), swapped for a resolved path
 *
 * A path is any mix of `.field` and `[index]`. A string that is exactly one placeholder keeps
 * the referenced value's JSON type; embedded placeholders render as text.
 * Evaluation is a plain walk over data: no code is ever evaluated.
 */

/** One step of a path: an object key (`.field`) or a 0-based array index (`[index]`). */
export type PathPart = string | number;

/**
 * A parsed placeholder. `steps.index` is 1-based plan position; `node.id` a step id; `last`
 * the latest (plan order) direct dependency; `inputs.name` a workflow input. `path` is what
 * follows `result` (or the input name); `raw` the placeholder as written, braces included.
 */
export type Reference =
  | {
      /** `{{steps.N.result…}}`: a step by plan position. */
      kind: 'steps';
      /** The step's 1-based position in the plan. */
      index: number;
      /** The path after the root (`result`, the input name, `item`), as keys and indexes; empty for none. */
      path: PathPart[];
      /** The placeholder as written, braces included. */
      raw: string;
    }
  | {
      /** `{{node.<id>.result…}}` or `{{node.<id>.error…}}`: a step by id. */
      kind: 'node';
      /** The step's id. */
      id: string;
      /** The path after the root (`result`, the input name, `item`), as keys and indexes; empty for none. */
      path: PathPart[];
      /** The placeholder as written, braces included. */
      raw: string;
      /** `error` for `node.<id>.error` (the step's failure); absent for its result. */
      field?: 'error';
    }
  | {
      /** `{{last.result…}}`: the latest (plan order) direct dependency. */
      kind: 'last';
      /** The path after the root (`result`, the input name, `item`), as keys and indexes; empty for none. */
      path: PathPart[];
      /** The placeholder as written, braces included. */
      raw: string;
    }
  | {
      /** `{{inputs.<name>…}}`: a workflow input. */
      kind: 'inputs';
      /** The input's name. */
      name: string;
      /** The path after the root (`result`, the input name, `item`), as keys and indexes; empty for none. */
      path: PathPart[];
      /** The placeholder as written, braces included. */
      raw: string;
    }
  | {
      /** `{{item…}}`: the current element inside a forEach body. */
      kind: 'item';
      /** The path after the root (`result`, the input name, `item`), as keys and indexes; empty for none. */
      path: PathPart[];
      /** The placeholder as written, braces included. */
      raw: string;
    }
  | {
      /** `{{index}}`: the current element's 0-based position inside a forEach body. */
      kind: 'index';
      /** The path after the root (`result`, the input name, `item`), as keys and indexes; empty for none. */
      path: PathPart[];
      /** The placeholder as written, braces included. */
      raw: string;
    }
  | {
      /** `{{secrets.<NAME>}}`: a vault secret, substituted at dispatch. */
      kind: 'secrets';
      /** The secret's name. */
      name: string;
      /** The path after the root (`result`, the input name, `item`), as keys and indexes; empty for none. */
      path: PathPart[];
      /** The placeholder as written, braces included. */
      raw: string;
    };

/** A placeholder that parsed, or one that is malformed (`raw` is the text to report). */
export type ParsedToken =
  | {
      /** It parsed. */
      ok: true;
      /** The reference. */
      ref: Reference;
    }
  | {
      /** It is malformed. */
      ok: false;
      /** The placeholder as written, to report. */
      raw: string;
    };

/** One `{{…}}` placeholder (no braces inside). */
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
/** A field or input name inside a reference: a letter, `_` or `$`, then also digits and `-`. */
const IDENT = '[A-Za-z_$][A-Za-z0-9_$-]*';
/** A reference path: any mix of `.field` and `[index]` parts. */
const PATH = `(?:\\.${IDENT}|\\[\\d+\\])*`;
/** The whole reference grammar (one of the seven roots), surrounding spaces allowed; a secret has no path. */
const REF_RE = new RegExp(
  `^\\s*(?:steps\\.(\\d+)\\.result(${PATH})|node\\.([A-Za-z][A-Za-z0-9_-]*)\\.(result|error)(${PATH})|last\\.result(${PATH})|inputs\\.(${IDENT})(${PATH})|item(${PATH})|(index)|secrets\\.([A-Za-z_][A-Za-z0-9_]{0,63}))\\s*$`,
);
/** A whole `@file:<name>` string. */
const FILE_RE = /^@file:([A-Za-z_][A-Za-z0-9_-]*)$/;

/**
 * Splits a path such as `.rows[0].name` into parts (`['rows', 0, 'name']`). Field names start
 * with a letter, `_` or `$`; indexes are decimal digits. Text that fits neither is skipped.
 */
export function parsePath(text: string): PathPart[] {
  const parts: PathPart[] = [];
  const re = /\.([A-Za-z_$][A-Za-z0-9_$-]*)|\[(\d+)\]/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    parts.push(m[1] !== undefined ? m[1] : Number(m[2]));
  }
  return parts;
}

/**
 * Parses the inside of one `{{…}}` (surrounding spaces allowed): `steps.2.result.rows[0]`,
 * `node.fetch.result`, `last.result.text`, `inputs.city`. Anything outside the grammar (an
 * unknown root, a missing `.result`, a bad id or path) is returned as malformed; `raw` defaults
 * to the placeholder with its braces.
 */
export function parseReference(inner: string, raw = `{{${inner}}}`): ParsedToken {
  const m = REF_RE.exec(inner);
  if (!m) return { ok: false, raw };
  if (m[1] !== undefined) return { ok: true, ref: { kind: 'steps', index: Number(m[1]), path: parsePath(m[2] ?? ''), raw } };
  if (m[3] !== undefined) return { ok: true, ref: { kind: 'node', id: m[3], path: parsePath(m[5] ?? ''), raw, ...(m[4] === 'error' ? { field: 'error' as const } : {}) } };
  if (m[6] !== undefined) return { ok: true, ref: { kind: 'last', path: parsePath(m[6]), raw } };
  if (m[9] !== undefined) return { ok: true, ref: { kind: 'item', path: parsePath(m[9]), raw } };
  if (m[10] !== undefined) return { ok: true, ref: { kind: 'index', path: [], raw } };
  if (m[11] !== undefined) return { ok: true, ref: { kind: 'secrets', name: m[11], path: [], raw } };
  return { ok: true, ref: { kind: 'inputs', name: m[7] as string, path: parsePath(m[8] ?? ''), raw } };
}

/**
 * Every placeholder token in a string, parsed or flagged malformed, in order. A `{{` with no
 * well-formed close adds one malformed token carrying the whole string.
 */
export function scanString(text: string): ParsedToken[] {
  const out: ParsedToken[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) out.push(parseReference(m[1] as string, m[0]));
  // An opening `{{` without a well-formed close is malformed too.
  const opens = (text.match(/\{\{/g) ?? []).length;
  if (opens > out.length) out.push({ ok: false, raw: text });
  return out;
}

/**
 * The file input name of an `@file:<name>` string, or undefined. The whole string must be the
 * marker; the name starts with a letter or `_`, then letters, digits, `_` or `-`.
 */
export function fileInputOf(value: string): string | undefined {
  return FILE_RE.exec(value)?.[1];
}

/**
 * The single reference of a string that is exactly one placeholder (no text around the braces),
 * or undefined, also when that placeholder is malformed. Such a string resolves to the
 * referenced value with its JSON type kept.
 */
export function exactReference(text: string): Reference | undefined {
  const m = /^\{\{([^{}]*)\}\}$/.exec(text);
  if (!m) return undefined;
  const parsed = parseReference(m[1] as string, text);
  return parsed.ok ? parsed.ref : undefined;
}

/** One placeholder found by `collectReferences`, with where its string sits. */
export interface FoundToken {
  /** JSON path of the string inside the scanned value (keys and 0-based indexes). */
  at: PathPart[];
  /** The placeholder, parsed or malformed. */
  token: ParsedToken;
  /** True when the string is exactly this one placeholder. */
  exact: boolean;
}

/**
 * Walks any JSON value and lists every placeholder in its strings (object values and array
 * items, depth first; keys are not scanned). `at` prefixes every found path.
 */
export function collectReferences(value: unknown, at: PathPart[] = []): FoundToken[] {
  if (typeof value === 'string') {
    const tokens = scanString(value);
    const exact = tokens.length === 1 && exactReference(value) !== undefined;
    return tokens.map((token) => ({ at, token, exact }));
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => collectReferences(v, [...at, i]));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => collectReferences(v, [...at, k]));
  }
  return [];
}

/** The input names of every `@file:<name>` string inside a JSON value, in walk order, repeats kept. */
export function collectFileInputs(value: unknown): string[] {
  if (typeof value === 'string') {
    const name = fileInputOf(value);
    return name ? [name] : [];
  }
  if (Array.isArray(value)) return value.flatMap(collectFileInputs);
  if (value && typeof value === 'object') return Object.values(value).flatMap(collectFileInputs);
  return [];
}

/**
 * Reads `path` inside `value`; `undefined` when any part is missing. A number part reads an
 * array only, a string part a non-array object's own property only (never an inherited one).
 */
export function getPath(value: unknown, path: PathPart[]): unknown {
  let cur: unknown = value;
  for (const part of path) {
    if (cur === null || cur === undefined) return undefined;
    if (typeof part === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[part];
    } else {
      if (typeof cur !== 'object' || Array.isArray(cur)) return undefined;
      if (!Object.hasOwn(cur as object, part)) return undefined;
      cur = (cur as Record<string, unknown>)[part];
    }
  }
  return cur;
}

/** Writes a path back as text: `['rows', 0, 'name']` → `.rows[0].name`; empty path → ``. */
export function formatPath(path: PathPart[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

/** What the resolver needs to know about the run at dispatch time. */
export interface ResolveScope {
  /** Step ids in plan order (for `steps.N`, N 1-based, and for ordering `last`). */
  stepIds: readonly string[];
  /** Results of finished steps, by id; a step without an entry has not finished. */
  results: ReadonlyMap<string, unknown>;
  /**
   * The resolving step's direct dependencies (for `last`: the one latest in plan order). With
   * none, `last` does not resolve.
   */
  dependsOn: readonly string[];
  /** The run's bound inputs (for `inputs.<name>`). */
  inputs: Readonly<Record<string, unknown>>;
  /** Swaps a file input name for the current tool's resolved value (a path). */
  file?: (name: string) => unknown;
  /** Inside a forEach body: the current element (`{{item}}`) and its 0-based position (`{{index}}`). */
  iteration?: {
    /** The current element. */
    item: unknown;
    /** Its 0-based position in the list. */
    index: number;
  };
  /**
   * The failures of steps that failed and whose `onError` let the run go on, by id: what
   * `{{node.<id>.error}}` reads (`{code, message}`). Such a step's result is `null`.
   */
  errors?: ReadonlyMap<string, StepFailure>;
  /** Steps that were skipped: a reference to one is `null` (a whole-value placeholder) or `""` (inside text). */
  skipped?: ReadonlySet<string>;
  /**
   * A secret's value, by name (only right before dispatch). Without it a `{{secrets.NAME}}`
   * placeholder stays as written, which is how arguments are shown in events and gates.
   */
  secret?: (name: string) => string | undefined;
}

/** A failed step's error as `{{node.<id>.error}}` reads it. */
export interface StepFailure {
  /** The error code the step failed with; `step_failed` when the failure carries none of its own. */
  code: string;
  /** The failure in words. */
  message: string;
}

/** What `lookup` answers for a reference to a skipped step. */
const SKIPPED: unique symbol = Symbol('skipped');

/**
 * Thrown at dispatch when a placeholder points at nothing: an unknown or unfinished step, an
 * absent input, or a path that is missing in the value. `ref` is the placeholder as written.
 */
export class UnresolvedReferenceError extends Error {
  constructor(readonly ref: string) {
    super(`reference ${ref} resolved to nothing`);
    this.name = 'UnresolvedReferenceError';
  }

  /** What went wrong and what to do, as a message of the tables (see `unresolvedReferenceMessage`). */
  get text(): { $message: string; params: Record<string, unknown> } {
    return unresolvedReferenceMessage(this.ref);
  }
}

/**
 * The message for a reference that pointed at nothing when its step ran, by what it names: a
 * file input (choose a file when starting), a value input, a step's result, a secret.
 */
export function unresolvedReferenceMessage(ref: string): { $message: string; params: Record<string, unknown> } {
  const file = /^@file:([\w-]+)/.exec(ref);
  if (file) return { $message: 'ref_unresolved_file', params: { ref, name: file[1] } };
  const inner = /^\{\{\s*([\s\S]*?)\s*\}\}$/.exec(ref)?.[1] ?? ref;
  const input = /^inputs\.([\w-]+)/.exec(inner);
  if (input) return { $message: 'ref_unresolved_input', params: { ref, name: input[1] } };
  const step = /^steps\.([\w-]+)/.exec(inner);
  if (step) return { $message: 'ref_unresolved_step', params: { ref, step: step[1] } };
  const secret = /^secrets\.([\w-]+)/.exec(inner);
  if (secret) return { $message: 'ref_unresolved_secret', params: { ref, name: secret[1] } };
  return { $message: 'ref_unresolved', params: { ref } };
}

/**
 * The value a reference points at in `scope` (`null` for a skipped step's result); throws
 * `UnresolvedReferenceError` when the step has no result yet, the input is absent, or the path
 * reads nothing (`undefined`).
 */
export function resolveReference(ref: Reference, scope: ResolveScope): unknown {
  const value = lookup(ref, scope);
  return value === SKIPPED ? null : value;
}

/** A reference's value as text inside a longer string: `""` for a skipped step's result. */
export function resolveText(ref: Reference, scope: ResolveScope): string {
  const value = lookup(ref, scope);
  return value === SKIPPED ? '' : renderText(value);
}

function lookup(ref: Reference, scope: ResolveScope): unknown {
  let base: unknown;
  let found = true;
  const skipped = scope.skipped;
  switch (ref.kind) {
    case 'steps': {
      const id = scope.stepIds[ref.index - 1];
      if (skipped && id !== undefined && skipped.has(id)) return SKIPPED;
      found = id !== undefined && scope.results.has(id);
      base = id === undefined ? undefined : scope.results.get(id);
      break;
    }
    case 'node':
      if (ref.field === 'error') {
        // a failed step that the run went past has `{code, message}`; one that ended otherwise, null
        const failure = scope.errors?.get(ref.id);
        found = failure !== undefined || scope.results.has(ref.id) || (skipped?.has(ref.id) ?? false);
        base = failure ?? null;
        break;
      }
      if (skipped?.has(ref.id)) return SKIPPED;
      found = scope.results.has(ref.id);
      base = scope.results.get(ref.id);
      break;
    case 'last': {
      const order = new Map(scope.stepIds.map((id, i) => [id, i]));
      const latest = [...scope.dependsOn].map((d) => d.split(':')[0] as string).sort((a, b) => (order.get(b) ?? -1) - (order.get(a) ?? -1))[0];
      if (skipped && latest !== undefined && skipped.has(latest)) return SKIPPED;
      found = latest !== undefined && scope.results.has(latest);
      base = latest === undefined ? undefined : scope.results.get(latest);
      break;
    }
    case 'inputs':
      found = Object.hasOwn(scope.inputs, ref.name);
      base = scope.inputs[ref.name];
      break;
    case 'item':
      found = scope.iteration !== undefined;
      base = scope.iteration?.item;
      break;
    case 'index':
      found = scope.iteration !== undefined;
      base = scope.iteration?.index;
      break;
    case 'secrets':
      // shown as written until dispatch; a name the vault lacks resolves to nothing
      base = scope.secret ? scope.secret(ref.name) : ref.raw;
      break;
  }
  const value = found ? getPath(base, ref.path) : undefined;
  if (value === undefined) throw new UnresolvedReferenceError(ref.raw);
  return value;
}

/** A value as text inside a longer string: strings as they are, anything else as JSON. */
export function renderText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Resolves one string. An `@file:<name>` string becomes `scope.file(name)` (when given); a
 * string that is exactly one placeholder becomes the referenced value, JSON type kept;
 * otherwise each placeholder is replaced by its value as text (strings as is, others as JSON)
 * and malformed ones are left as written. Throws `UnresolvedReferenceError`.
 */
export function resolveString(text: string, scope: ResolveScope): unknown {
  const file = fileInputOf(text);
  if (file !== undefined && scope.file) return scope.file(file);
  const exact = exactReference(text);
  if (exact) return resolveReference(exact, scope);
  return text.replace(PLACEHOLDER, (whole, inner: string) => {
    const parsed = parseReference(inner, whole);
    if (!parsed.ok) return whole;
    return resolveText(parsed.ref, scope);
  });
}

/**
 * Resolves every placeholder inside a JSON value (a step's arguments), returning a new value;
 * keys and non-string leaves are copied unchanged. Throws `UnresolvedReferenceError`.
 */
export function resolveValue(value: unknown, scope: ResolveScope): unknown {
  if (typeof value === 'string') return resolveString(value, scope);
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, scope));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolveValue(v, scope);
    return out;
  }
  return value;
}
