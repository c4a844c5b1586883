/**
 * `fengyu run` at an input step: the form shown field by field, each line typed at the terminal
 * read as the field's type, and the hint printed when nobody is at a terminal (answer it later
 * with `fengyu answer <gateId> --values JSON`). Pure apart from the reader it is given.
 */

type Field = { type?: string; title?: string; enum?: unknown[]; format?: string; maxLength?: number };

/** The form's fields in order, each with whether it is required. */
export function formFields(form: Record<string, unknown>): Array<{ name: string; field: Field; required: boolean }> {
  const props = (form.properties ?? {}) as Record<string, Field>;
  const required = Array.isArray(form.required) ? (form.required as string[]) : [];
  return Object.entries(props).map(([name, field]) => ({ name, field, required: required.includes(name) }));
}

/** One line describing a field: `discount (number, required): Discount`. */
export function fieldLine(name: string, field: Field, required: boolean): string {
  const kind = field.type === 'array' ? 'list, comma-separated' : field.enum ? `one of ${field.enum.join(' | ')}` : field.format ? `${field.type}, ${field.format}` : String(field.type);
  return `${name} (${kind}${required ? ', required' : ''})${field.title ? `: ${field.title}` : ''}`;
}

/**
 * A typed line as the field's value: numbers and integers as numbers (text that is no number is
 * kept, so the host names the field), yes/no/true/false as booleans, a comma-separated list as
 * strings; an empty line leaves the field out.
 */
export function fieldValue(field: Field, line: string): unknown {
  const text = line.trim();
  if (text === '') return undefined;
  switch (field.type) {
    case 'number':
    case 'integer':
      return Number.isFinite(Number(text)) ? Number(text) : text;
    case 'boolean':
      return /^(y|yes|true|1)$/i.test(text) ? true : /^(n|no|false|0)$/i.test(text) ? false : text;
    case 'array':
      return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
    default:
      return line;
  }
}

/** How to answer from another terminal: the command with an example of the values. */
export function answerHint(gateId: string, form: Record<string, unknown>): string {
  const example = Object.fromEntries(formFields(form).map(({ name, field }) => [name, field.type === 'number' || field.type === 'integer' ? 0 : field.type === 'boolean' ? false : field.type === 'array' ? [] : '']));
  return `Answer it with: fengyu answer ${gateId} --values '${JSON.stringify(example)}'   (or in the Inbox page)`;
}

/** Asks every field at the terminal (`read` answers each question) and returns the values typed. */
export async function askValues(form: Record<string, unknown>, read: (question: string) => Promise<string | undefined>): Promise<Record<string, unknown> | undefined> {
  const values: Record<string, unknown> = {};
  for (const { name, field, required } of formFields(form)) {
    const line = await read(`  ${fieldLine(name, field, required)}: `);
    if (line === undefined) return undefined;
    const v = fieldValue(field, line);
    if (v !== undefined) values[name] = v;
  }
  return values;
}
