import { inputContract, type JsonSchema } from '@fengyu/protocol';
import type { FieldType, StartField } from './graph';

/**
 * The Start node's fields ⇄ the workflow's input JSON Schema. Keywords the field editor does not
 * model are carried in `extra`, so a template's schema survives a round trip unchanged.
 */

const MODELLED = new Set(['type', 'title', 'description', 'enum', 'examples', 'format', 'items']);

function fieldTypeOf(prop: JsonSchema): FieldType {
  if (prop.format === 'fengyu-file') return 'file';
  switch (prop.type) {
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    case 'array':
      return 'list';
    case 'object':
      return 'object';
    default:
      return 'text';
  }
}

export function schemaToFields(schema: JsonSchema | undefined): StartField[] {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(props).map(([name, prop]) => {
    const type = fieldTypeOf(prop);
    const field: StartField = { name, type };
    if (typeof prop.title === 'string') field.label = prop.title;
    if (typeof prop.description === 'string') field.description = prop.description;
    if (required.has(name)) field.required = true;
    if (Array.isArray(prop.enum)) field.options = prop.enum.map(String);
    if (Array.isArray(prop.examples) && prop.examples.length > 0) field.example = prop.examples[0];
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(prop)) if (!MODELLED.has(k)) extra[k] = v;
    if (prop.format !== undefined && prop.format !== 'fengyu-file') extra.format = prop.format;
    if (prop.items !== undefined && !isPlainItems(prop.items)) extra.items = prop.items;
    if (Object.keys(extra).length > 0) field.extra = extra;
    return field;
  });
}

function isPlainItems(items: unknown): boolean {
  return !!items && typeof items === 'object' && Object.keys(items).length === 1 && (items as JsonSchema).type === 'string';
}

export function fieldSchema(field: StartField): JsonSchema {
  const prop: JsonSchema = {};
  switch (field.type) {
    case 'file':
      prop.type = 'string';
      prop.format = 'fengyu-file';
      break;
    case 'list':
      prop.type = 'array';
      prop.items = { type: 'string' };
      break;
    case 'text':
      prop.type = 'string';
      break;
    default:
      prop.type = field.type;
  }
  if (field.label) prop.title = field.label;
  if (field.description) prop.description = field.description;
  if (field.options && field.options.length > 0) prop.enum = [...field.options];
  if (field.example !== undefined && field.example !== '') prop.examples = [field.example];
  return { ...prop, ...(field.extra ?? {}) };
}

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

export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** Problems of the field list itself (names must be valid reference names and unique). */
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
