import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * JSON Schema checking for tool arguments and workflow inputs. Tool schemas come from plugins
 * and MCP servers, so the checker is lenient about unknown keywords (strict: false) but knows
 * FengYu's own annotations.
 */

/**
 * One shared checker: reports every error (not just the first), ignores unknown keywords,
 * checks the standard `format`s; `fengyu-file` and `fengyu-directory` accept any string, and the
 * `x-fengyu-*` annotations are known keywords that check nothing.
 */
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true });
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

/** One way a value fails its schema, ready to name the field in a localized problem. */
export interface SchemaIssue {
  /**
   * JSON pointer of the offending value ("" for the root), e.g. `/files/0/name`; for a missing
   * property, the pointer of the object that lacks it.
   */
  pointer: string;
  /** Readable path such as `.files[0].name` (the missing property included for `required`). */
  path: string;
  /**
   * What is wrong, in English: `is required`, `is not an accepted property`,
   * `must be one of [...]`, or the checker's own message.
   */
  message: string;
  /** The JSON Schema keyword that failed (`required`, `type`, `enum`, …). */
  keyword: string;
}

/** Turns one checker error into a `SchemaIssue`, pointing `required` and extra-property issues at the property. */
function describe(e: ErrorObject): SchemaIssue {
  const segments = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = segments.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`)).join('');
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    path = `${path}.${missing}`;
    message = 'is required';
  } else if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    path = `${path}.${extra}`;
    message = 'is not an accepted property';
  } else if (e.keyword === 'enum') {
    message = `must be one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`;
  }
  return { pointer: e.instancePath, path: path || '(root)', message, keyword: e.keyword };
}

/**
 * Every issue of `value` against `schema`; an empty list when it conforms. An absent schema,
 * or one that does not compile (a third party's), checks nothing and returns an empty list.
 */
export function checkSchema(schema: Record<string, unknown> | undefined, value: unknown): SchemaIssue[] {
  if (!schema || typeof schema !== 'object') return [];
  const fn = compile(schema);
  if (!fn || fn(value)) return [];
  return (fn.errors ?? []).map(describe);
}

/**
 * The checker of one schema, compiled once: every issue of a value against it (an empty list when
 * it conforms). The schema is read when the checker is made; later changes to that object do not
 * reach it (make a new checker for a changed schema). An absent or uncompilable schema checks nothing.
 */
export function schemaChecker(schema: Record<string, unknown> | undefined): (value: unknown) => SchemaIssue[] {
  const fn = schema && typeof schema === 'object' ? compile(schema) : null;
  return (value) => (!fn || fn(value) ? [] : (fn.errors ?? []).map(describe));
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
  let ok: boolean;
  try {
    // a checker of its own each time: the verdict depends on the schema's text alone
    new Ajv({ strict: false, validateFormats: false }).compile(schema as Record<string, unknown>);
    ok = true;
  } catch {
    ok = false;
  }
  if (compilable.size > 2000) compilable.clear();
  compilable.set(key, ok);
  return ok;
}

/** `isCompilableSchema` verdicts by schema JSON text (a workflow's input schema is checked at every run). */
const compilable = new Map<string, boolean>();
