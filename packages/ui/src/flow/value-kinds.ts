import type { FLOW_PORT_TYPES, JsonSchema } from '@fengyu/protocol';

/**
 * Data kinds of ports and inputs (text / number / object / list / file; `any` = undeclared),
 * derived from JSON Schemas or from actual values, and the compatibility rule used to filter
 * the variable tree by an input's expected type.
 */

export type ValueKind = (typeof FLOW_PORT_TYPES)[number];

export const KIND_COLORS: Record<ValueKind, string> = {
  text: '#4FC3F7',
  number: '#FFB74D',
  boolean: '#FFD54F',
  object: '#BA68C8',
  list: '#81C784',
  file: '#F06292',
  any: '#9E9E9E',
};

const FILE_FORMATS = new Set(['fengyu-file', 'fengyu-directory']);

export function schemaKind(schema: JsonSchema | undefined): ValueKind {
  if (!schema || typeof schema !== 'object') return 'any';
  if (typeof schema.format === 'string' && FILE_FORMATS.has(schema.format)) return 'file';
  let type = schema.type;
  if (Array.isArray(type)) type = type.filter((t) => t !== 'null')[0];
  switch (type) {
    case 'string':
      return 'text';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return 'list';
    case 'object':
      return 'object';
  }
  if (schema.properties) return 'object';
  if (schema.items) return 'list';
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) return 'text';
  return 'any';
}

export function valueKind(value: unknown): ValueKind {
  if (value === undefined || value === null) return 'any';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'object';
  return 'any';
}

export interface Compatibility {
  ok: boolean;
  /** i18n key of the reason when not ok. */
  reason?: 'kind_mismatch';
}

/**
 * Can a value of kind `actual` feed an input expecting `expected`? Unknown on either side is
 * accepted; scalars render into text; a file input also takes a text path.
 */
export function compatible(expected: ValueKind, actual: ValueKind): Compatibility {
  if (expected === 'any' || actual === 'any' || expected === actual) return { ok: true };
  if (expected === 'text' && (actual === 'number' || actual === 'boolean' || actual === 'file')) return { ok: true };
  if (expected === 'file' && actual === 'text') return { ok: true };
  return { ok: false, reason: 'kind_mismatch' };
}

/** The schema of a property path inside an object/array schema, when declared. */
export function childSchema(schema: JsonSchema | undefined, part: string | number): JsonSchema | undefined {
  if (!schema) return undefined;
  if (typeof part === 'number') {
    const items = schema.items;
    return items && typeof items === 'object' && !Array.isArray(items) ? (items as JsonSchema) : undefined;
  }
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  return props?.[part];
}

/** The declared example of a schema (`examples[0]`, `example`, or `default`). */
export function schemaExample(schema: JsonSchema | undefined): unknown {
  if (!schema) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('default' in schema) return schema.default;
  return undefined;
}
