import type { JsonSchema } from './catalog';
import type { FieldType, StartField } from './graph-model';
import { inputContract, SHARED_DIRECTORY } from './workflow';

/** The Start node's fields ⇄ the workflow's input schema. Pure; no I/O. */

/** Schema keywords a Start field models itself; every other keyword travels in `extra`. */
const MODELLED_KEYWORDS = new Set(['type', 'title', 'description', 'enum', 'examples', 'format', 'items']);
/** The field type of each JSON Schema `type`; any other type (and none) is `text`. */
const FIELD_TYPE_OF_SCHEMA: Record<string, FieldType> = { number: 'number', integer: 'integer', boolean: 'boolean', array: 'list', object: 'object' };

/** A property's field type: `folder` for a text shared directory, `file` for `format: "fengyu-file"`, else by its `type`. */
function fieldTypeOf(prop: JsonSchema): FieldType {
  if (prop['x-fengyu-auto'] === SHARED_DIRECTORY && prop.type === 'string') return 'folder';
  if (prop.format === 'fengyu-file') return 'file';
  return FIELD_TYPE_OF_SCHEMA[String(prop.type)] ?? 'text';
}

/** True for exactly `{type: "string"}`, the `items` a `list` field implies. */
function isPlainItems(items: unknown): boolean {
  return !!items && typeof items === 'object' && Object.keys(items).length === 1 && (items as JsonSchema).type === 'string';
}

/**
 * The Start fields of an input schema, in property order; keywords the field editor does not
 * model are kept in `extra` (so are a non-file `format` and `items` other than `{type:
 * "string"}`). Enum values become string options; only the first example is kept.
 */
export function schemaToFields(schema: JsonSchema | undefined): StartField[] {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(props).map(([name, prop]) => {
    const field: StartField = { name, type: fieldTypeOf(prop) };
    if (typeof prop.title === 'string') field.label = prop.title;
    if (typeof prop.description === 'string') field.description = prop.description;
    if (required.has(name)) field.required = true;
    if (Array.isArray(prop.enum)) field.options = prop.enum.map(String);
    if (Array.isArray(prop.examples) && prop.examples.length > 0) field.example = prop.examples[0];
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(prop)) if (!MODELLED_KEYWORDS.has(k) && !(k === 'x-fengyu-auto' && field.type === 'folder')) extra[k] = v;
    if (prop.format !== undefined && (prop.format !== 'fengyu-file' || field.type === 'folder')) extra.format = prop.format;
    if (prop.items !== undefined && !isPlainItems(prop.items)) extra.items = prop.items;
    if (Object.keys(extra).length > 0) field.extra = extra;
    return field;
  });
}

/**
 * The JSON Schema of one Start field: its type, then `title`, `description`, `enum` and
 * `examples` when set (an empty-string example is dropped); `extra` keywords are applied last
 * and win.
 */
export function fieldSchema(field: StartField): JsonSchema {
  const prop: JsonSchema = {};
  if (field.type === 'file') Object.assign(prop, { type: 'string', format: 'fengyu-file' });
  else if (field.type === 'folder') Object.assign(prop, { type: 'string', 'x-fengyu-auto': SHARED_DIRECTORY });
  else if (field.type === 'list') Object.assign(prop, { type: 'array', items: { type: 'string' } });
  else prop.type = field.type === 'text' ? 'string' : field.type;
  if (field.label) prop.title = field.label;
  if (field.description) prop.description = field.description;
  if (field.options && field.options.length > 0) prop.enum = [...field.options];
  if (field.example !== undefined && field.example !== '') prop.examples = [field.example];
  return { ...prop, ...(field.extra ?? {}) };
}

/**
 * The input schema of a Start node's fields: `type: "object"`, one property per named field
 * (nameless fields are skipped), and `required` only when some field is required.
 */
export function fieldsToSchema(fields: readonly StartField[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const f of fields) if (f.name) properties[f.name] = fieldSchema(f);
  const required = fields.filter((f) => f.required && f.name).map((f) => f.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * A field bound as `@file:<name>` (an uploaded file or a run's shared directory), decided by the
 * same input contract the validator reads: such an input is never a `{{inputs.<name>}}` value.
 */
export function isFileBound(field: StartField): boolean {
  const c = inputContract({ type: 'object', properties: { [field.name]: fieldSchema(field) } });
  return c.files.length > 0 || c.sharedDirectories.length > 0;
}

/**
 * A valid Start field name: usable as `{{inputs.<name>}}` and `@file:<name>`: a letter or
 * `_`, then letters, digits, `_` or `-` (the same rule as `INPUT_NAME_PATTERN`).
 */
export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Problems of the field list itself: each name matches `FIELD_NAME_PATTERN`
 * (`field_name_invalid`) and is unique (`field_name_duplicate` on each repeat). `index` is the
 * field's 0-based position.
 */
export function fieldProblems(fields: readonly StartField[]): Array<{ index: number; code: 'field_name_invalid' | 'field_name_duplicate' }> {
  const seen = new Set<string>();
  const out: Array<{ index: number; code: 'field_name_invalid' | 'field_name_duplicate' }> = [];
  fields.forEach((f, index) => {
    if (!FIELD_NAME_PATTERN.test(f.name)) out.push({ index, code: 'field_name_invalid' });
    else if (seen.has(f.name)) out.push({ index, code: 'field_name_duplicate' });
    seen.add(f.name);
  });
  return out;
}
