import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { type LocalText, localize } from './i18n/index';
import { linearEngineReady, linearRegExp, schemaPatterns } from './safe-regexp';

/**
 * JSON Schema checking for tool arguments and workflow inputs. Tool schemas come from plugins
 * and MCP servers, so the checker is lenient about unknown keywords (strict: false) but knows
 * FengYu's own annotations.
 */

/**
 * One shared checker: reports every error (not just the first), ignores unknown keywords,
 * checks the standard `format`s, runs `pattern` in linear time (RE2); `fengyu-file` and `fengyu-directory` accept any string, and the
 * `x-fengyu-*` annotations are known keywords that check nothing.
 */
// `pattern` runs on RE2 (safe-regexp.ts): an untrusted schema cannot stall the event loop.
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true, verbose: true, code: { regExp: linearRegExp } });
const addFormats = (addFormatsModule as unknown as { default?: (a: Ajv) => void }).default ?? (addFormatsModule as unknown as (a: Ajv) => void);
addFormats(ajv);
ajv.addFormat('fengyu-file', true);
ajv.addFormat('fengyu-directory', true);
for (const keyword of ['x-fengyu-enum', 'x-fengyu-auto', 'x-fengyu-label', 'x-fengyu-help', 'x-fengyu-widget']) ajv.addKeyword(keyword);

/**
 * Compiled validators by schema JSON text; `null` marks a schema that does not compile. Cleared
 * once it holds more than 2000 entries.
 */
const cache = new Map<string, ValidateFunction | null>();

function compile(schema: Record<string, unknown>): ValidateFunction | null {
  const key = JSON.stringify(schema);
  if (cache.has(key)) return cache.get(key) ?? null;
  // not checked yet (the web UI before RE2 has loaded): nothing is cached, the next check compiles it
  if (patternsWaiting(schema)) return null;
  let fn: ValidateFunction | null = null;
  try {
    fn = ajv.compile(schema);
  } catch {
    fn = null; // an uncompilable third-party schema checks nothing rather than failing every call
  }
  if (cache.size > 2000) cache.clear();
  cache.set(key, fn);
  return fn;
}

/** True when the schema has a pattern and RE2 is not loaded yet (only ever in the web UI). */
function patternsWaiting(schema: unknown): boolean {
  return !linearEngineReady() && schemaPatterns(schema).length > 0;
}

/** One way a value fails its schema, ready to name the field in a localized problem. */
export interface SchemaIssue {
  /**
   * JSON pointer of the offending value ("" for the root), e.g. `/files/0/name`; for a missing
   * property, the pointer of the object that lacks it.
   */
  pointer: string;
  /** Readable path such as `.files[0].name` (the missing property included for `required`). */
  path: string;
  /** The issue as an English sentence naming the field (see `text` for any language). */
  message: string;
  /** The JSON Schema keyword that failed (`required`, `type`, `enum`, …). */
  keyword: string;
  /** The field's property name (the last named segment of `path`); absent at the root. */
  name?: string;
  /** The field's `title` in its schema, when it has one. */
  title?: string;
  /** The issue as a sentence in any language (`{$message, params}`), the field named by `title`, else `name`. */
  text: LocalText;
}

/** How a field is named in an issue's sentence: a caller's label for a top-level field (e.g. a node's input label). */
export type FieldLabel = (name: string) => LocalText | string | undefined;

const TYPE_CODES: Record<string, string> = { string: 'schema_type_string', number: 'schema_type_number', integer: 'schema_type_integer', boolean: 'schema_type_boolean', object: 'schema_type_object', array: 'schema_type_array', null: 'schema_type_null' };

const list = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');

/** The sentence of one checker error: the rule's message with the field named. */
function ruleText(e: ErrorObject, field: LocalText | string): { $message: string; params: Record<string, unknown> } {
  const p = e.params as Record<string, unknown>;
  const m = (code: string, more: Record<string, unknown> = {}) => ({ $message: code, params: { field, ...more } });
  switch (e.keyword) {
    case 'required':
      return m('schema_required');
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return m('schema_extra');
    case 'enum':
      return m('schema_enum', { allowed: list(p.allowedValues as unknown[]) });
    case 'const':
      return m('schema_const', { allowed: list([p.allowedValue]) });
    case 'type': {
      const type = String(p.type).split(',')[0] ?? '';
      return TYPE_CODES[type] ? m(TYPE_CODES[type]) : m('schema_invalid', { rule: e.message ?? 'type' });
    }
    case 'minLength':
      return p.limit === 1 ? m('schema_empty') : m('schema_min_length', { limit: String(p.limit) });
    case 'maxLength':
      return m('schema_max_length', { limit: String(p.limit) });
    case 'minimum':
      return m('schema_minimum', { limit: String(p.limit) });
    case 'maximum':
      return m('schema_maximum', { limit: String(p.limit) });
    case 'exclusiveMinimum':
      return m('schema_exclusive_minimum', { limit: String(p.limit) });
    case 'exclusiveMaximum':
      return m('schema_exclusive_maximum', { limit: String(p.limit) });
    case 'minItems':
      return p.limit === 1 ? m('schema_empty') : m('schema_min_items', { limit: String(p.limit) });
    case 'maxItems':
      return m('schema_max_items', { limit: String(p.limit) });
    case 'uniqueItems':
      return m('schema_unique_items');
    case 'pattern':
      return m('schema_pattern');
    case 'format':
      return m('schema_format', { format: String(p.format) });
    case 'oneOf':
    case 'anyOf':
      return m('schema_one_of');
    default:
      return m('schema_invalid', { rule: e.message ?? e.keyword });
  }
}

/**
 * Turns one checker error into a `SchemaIssue`, pointing `required` and extra-property issues at
 * the property; the field is named by `label` (top-level fields), its schema `title`, else its
 * property name (with the item number when it sits in a list).
 */
export function describeIssue(e: ErrorObject, label?: FieldLabel): SchemaIssue {
  const segments = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const parent = (e.parentSchema ?? {}) as { title?: unknown; properties?: Record<string, { title?: unknown }> };
  let title = typeof parent.title === 'string' ? parent.title : undefined;
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    segments.push(missing);
    const t = parent.properties?.[missing]?.title;
    title = typeof t === 'string' ? t : undefined;
  } else if (e.keyword === 'additionalProperties') {
    segments.push((e.params as { additionalProperty: string }).additionalProperty);
    title = undefined;
  }
  const path = segments.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('');
  const named = segments.filter((s) => !/^\d+$/.test(s));
  const name = named.at(-1);
  const index = [...segments].reverse().find((s) => /^\d+$/.test(s));
  const own = segments.length === 1 && name !== undefined ? label?.(name) : undefined;
  let field: LocalText | string = own ?? title ?? name ?? { $message: 'schema_the_value' };
  if (index !== undefined && own === undefined) field = { $message: 'schema_item', params: { field, index: String(Number(index) + 1) } };
  const text = ruleText(e, field);
  return { pointer: e.instancePath, path: path || '(root)', message: localize(text.$message, text.params), keyword: e.keyword, ...(name !== undefined ? { name } : {}), ...(title !== undefined ? { title } : {}), text };
}


/**
 * Every issue of `value` against `schema`; an empty list when it conforms. An absent schema,
 * or one that does not compile (a third party's), checks nothing and returns an empty list.
 */
export function checkSchema(schema: Record<string, unknown> | undefined, value: unknown, label?: FieldLabel): SchemaIssue[] {
  if (!schema || typeof schema !== 'object') return [];
  const fn = compile(schema);
  if (!fn || fn(value)) return [];
  return (fn.errors ?? []).map((e) => describeIssue(e, label));
}

/**
 * The checker of one schema, compiled once: every issue of a value against it (an empty list when
 * it conforms). The schema is read when the checker is made; later changes to that object do not
 * reach it (make a new checker for a changed schema). An absent or uncompilable schema checks nothing.
 */
export function schemaChecker(schema: Record<string, unknown> | undefined): (value: unknown) => SchemaIssue[] {
  const fn = schema && typeof schema === 'object' ? compile(schema) : null;
  return (value) => (!fn || fn(value) ? [] : (fn.errors ?? []).map((e) => describeIssue(e)));
}

/**
 * True when `schema` is a JSON-Schema object (not an array, not null) that compiles, unknown
 * keywords allowed and formats not checked.
 */
export function isCompilableSchema(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return false;
  const key = JSON.stringify(schema);
  const known = compilable.get(key);
  if (known !== undefined) return known;
  if (patternsWaiting(schema)) return true; // not known yet: checked again once RE2 is there
  const ok = compiles(schema as Record<string, unknown>, key);
  if (compilable.size > 2000) compilable.clear();
  compilable.set(key, ok);
  return ok;
}

/** `isCompilableSchema` verdicts by schema JSON text (a workflow's input schema is checked at every run). */
const compilable = new Map<string, boolean>();

const COMPILE_CHECK = { strict: false, validateFormats: false, code: { regExp: linearRegExp } } as const;
/** A schema that can register a name another schema could `$ref`: such a schema is checked apart. */
const NAMES_ITSELF = /"\$(?:id|anchor|dynamicAnchor)"/;
/**
 * The checker `compiles` shares (made on first use). A fresh Ajv compiles its meta-schema again
 * before the schema: ≈ 70 % of a check, and a manifest checks every method's schema (the bundled
 * plugins' manifests took 1.1 s of a first start's CPU at load 15, 2.4 s against 1.2 s for a restart).
 */
let sharedCheck: Ajv | undefined;

/**
 * Whether the schema compiles; the verdict depends on its text alone. It is compiled on the shared
 * checker and removed from it again, so nothing of it stays; a schema naming an `$id` or anchor
 * anywhere gets a checker of its own (a name it registers could let a later schema's `$ref`
 * resolve on a shared checker where it would not on its own).
 */
function compiles(schema: Record<string, unknown>, text: string): boolean {
  const own = NAMES_ITSELF.test(text);
  const checker = own ? new Ajv(COMPILE_CHECK) : (sharedCheck ??= new Ajv(COMPILE_CHECK));
  try {
    checker.compile(schema);
    return true;
  } catch {
    return false;
  } finally {
    if (!own) checker.removeSchema(schema);
  }
}
