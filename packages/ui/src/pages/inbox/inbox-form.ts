/**
 * An input item's form as fields: the property types an input step's form may use (string, with
 * `enum` or `format` email|date|uri; number; integer; boolean; array of strings), and the values
 * typed into them turned back into JSON of those types. The host checks the values against the
 * form; this only shapes them.
 */

export interface FormField {
  name: string;
  title: string;
  kind: 'text' | 'email' | 'date' | 'uri' | 'enum' | 'number' | 'integer' | 'boolean' | 'list';
  required: boolean;
  options?: string[];
  initial: unknown;
}

type Prop = { type?: string; title?: string; enum?: unknown[]; format?: string; default?: unknown; items?: { type?: string } };

function kindOf(p: Prop): FormField['kind'] {
  if (p.type === 'number' || p.type === 'integer' || p.type === 'boolean') return p.type;
  if (p.type === 'array') return 'list';
  if (Array.isArray(p.enum)) return 'enum';
  if (p.format === 'email' || p.format === 'date' || p.format === 'uri') return p.format;
  return 'text';
}

export function formFields(form: Record<string, unknown>): FormField[] {
  const props = (form.properties ?? {}) as Record<string, Prop>;
  const required = new Set(Array.isArray(form.required) ? (form.required as string[]) : []);
  return Object.entries(props).map(([name, p]) => {
    const kind = kindOf(p);
    const initial = p.default ?? (kind === 'boolean' ? false : kind === 'list' ? '' : kind === 'enum' ? (p.enum?.[0] ?? '') : '');
    return { name, title: p.title ?? name, kind, required: required.has(name), ...(kind === 'enum' ? { options: (p.enum ?? []).map(String) } : {}), initial: Array.isArray(initial) ? initial.join(', ') : initial };
  });
}

/**
 * The host's refusal of the values, per field: `input_values_invalid` details name each field
 * (`values.<name>`) with its localized message; empty for any other error.
 */
export function fieldErrors(e: unknown): Record<string, string> {
  const err = e as { code?: string; details?: unknown };
  if (err?.code !== 'input_values_invalid' || !Array.isArray(err.details)) return {};
  const out: Record<string, string> = {};
  for (const d of err.details as Array<{ field?: string; message?: string }>) {
    const name = d.field?.startsWith('values.') ? d.field.slice('values.'.length) : undefined;
    if (name && d.message) out[name] = d.message;
  }
  return out;
}

/** The typed values: numbers as numbers, lists split on commas, empty optional fields left out. */
export function formValues(fields: FormField[], raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = raw[f.name];
    if (f.kind === 'boolean') {
      out[f.name] = v === true;
      continue;
    }
    const text = v === undefined || v === null ? '' : String(v).trim();
    if (text === '' && !f.required) continue;
    if (f.kind === 'number' || f.kind === 'integer') out[f.name] = text === '' ? text : Number(text);
    else if (f.kind === 'list') out[f.name] = text === '' ? [] : text.split(',').map((s) => s.trim()).filter(Boolean);
    else out[f.name] = text;
  }
  return out;
}
