/**
 * The Human Input node's form, edited field by field: rows (name, title, type, choices, format,
 * required, maximum length) to the JSON Schema an input step takes, and back. Keywords the rows do
 * not model (description, default, minimum, maximum) are kept per field. Pure.
 */

export const INPUT_FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'array'] as const;
export type InputFieldType = (typeof INPUT_FIELD_TYPES)[number];
export const INPUT_FORMATS = ['', 'email', 'date', 'uri'] as const;

export interface FormRow {
  name: string;
  title: string;
  type: InputFieldType;
  /** A string field's choices, comma-separated (empty: free text). */
  options: string;
  format: (typeof INPUT_FORMATS)[number];
  required: boolean;
  maxLength?: number;
  /** Keywords kept as they were. */
  extra: Record<string, unknown>;
}

const MODELLED = new Set(['type', 'title', 'enum', 'format', 'maxLength', 'items']);

/** The rows of a form (in property order). */
export function rowsOfForm(form: Record<string, unknown> | undefined): FormRow[] {
  const props = (form?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(form?.required) ? (form.required as string[]) : []);
  return Object.entries(props).map(([name, p]) => ({
    name,
    title: typeof p.title === 'string' ? p.title : '',
    type: (INPUT_FIELD_TYPES as readonly string[]).includes(String(p.type)) ? (p.type as InputFieldType) : 'string',
    options: Array.isArray(p.enum) ? p.enum.map(String).join(', ') : '',
    format: (INPUT_FORMATS as readonly string[]).includes(String(p.format ?? '')) ? ((p.format ?? '') as FormRow['format']) : '',
    required: required.has(name),
    ...(typeof p.maxLength === 'number' ? { maxLength: p.maxLength } : {}),
    extra: Object.fromEntries(Object.entries(p).filter(([k]) => !MODELLED.has(k))),
  }));
}

/** The form of the rows: choices, format and maximum length only on string fields; `required` when any is. */
export function formOfRows(rows: readonly FormRow[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const r of rows) {
    const options = r.options.split(',').map((s) => s.trim()).filter(Boolean);
    properties[r.name] = {
      ...r.extra,
      type: r.type,
      ...(r.title.trim() ? { title: r.title.trim() } : {}),
      ...(r.type === 'array' ? { items: { type: 'string' } } : {}),
      ...(r.type === 'string' && options.length ? { enum: options } : {}),
      ...(r.type === 'string' && r.format ? { format: r.format } : {}),
      ...(r.type === 'string' && r.maxLength !== undefined && r.maxLength >= 1 ? { maxLength: r.maxLength } : {}),
    };
  }
  const required = rows.filter((r) => r.required).map((r) => r.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** A new field's row, named `field`, `field_2`, … (unused among the rows). */
export function newRow(rows: readonly FormRow[]): FormRow {
  const taken = new Set(rows.map((r) => r.name));
  let name = 'field';
  for (let i = 2; taken.has(name); i++) name = `field_${i}`;
  return { name, title: '', type: 'string', options: '', format: '', required: false, extra: {} };
}
