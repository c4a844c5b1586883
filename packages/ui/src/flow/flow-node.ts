import { type CatalogEntry, FILE_INPUT_FORMAT, type FlowField, type JsonSchema } from '@fengyu/protocol';

/**
 * Plugins' `flowNodes` declarations: typed, nested outputs with examples and per-field
 * input help. Turned into JSON Schemas here so the rest of the canvas works on one representation.
 */

export function flowFieldSchema(f: FlowField): JsonSchema {
  const s: JsonSchema = {};
  switch (f.type) {
    case 'text':
      s.type = 'string';
      break;
    case 'number':
      s.type = 'number';
      break;
    case 'boolean':
      s.type = 'boolean';
      break;
    case 'file':
      s.type = 'string';
      s.format = FILE_INPUT_FORMAT;
      break;
    case 'list':
      s.type = 'array';
      if (f.items) s.items = flowFieldSchema(f.items);
      break;
    case 'object':
      s.type = 'object';
      break;
  }
  if (f.fields) {
    s.type = 'object';
    s.properties = Object.fromEntries(Object.entries(f.fields).map(([k, v]) => [k, flowFieldSchema(v)]));
  }
  if (f.label) s.title = f.label;
  if (f.help) s.description = f.help;
  if (f.example !== undefined) s.examples = [f.example];
  return s;
}

function fieldsOf(entry: CatalogEntry | undefined, key: 'inputs' | 'outputs'): Record<string, FlowField> | undefined {
  const v = entry?.flowNode?.[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, FlowField>) : undefined;
}

/** The declared output: the flowNode's typed outputs when present, else the tool's outputSchema. */
export function declaredOutputSchema(entry: CatalogEntry | undefined): JsonSchema | undefined {
  const outputs = fieldsOf(entry, 'outputs');
  if (outputs) return { type: 'object', properties: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, flowFieldSchema(v)])) };
  return entry?.outputSchema;
}

/** The tool's input schema with the flowNode's labels, help and examples folded in. */
export function decoratedInputSchema(entry: CatalogEntry | undefined): JsonSchema {
  const schema: JsonSchema = entry?.inputSchema ?? { type: 'object' };
  const inputs = fieldsOf(entry, 'inputs');
  if (!inputs) return schema;
  const props = { ...((schema.properties ?? {}) as Record<string, JsonSchema>) };
  for (const [name, f] of Object.entries(inputs)) {
    const declared = flowFieldSchema(f);
    const base = props[name] ?? {};
    props[name] = {
      ...declared,
      ...base,
      ...(f.label ? { title: f.label } : {}),
      ...(f.help ? { description: f.help } : {}),
      ...(f.example !== undefined && base.examples === undefined ? { examples: [f.example] } : {}),
      ...(f.type === 'file' && base.format === undefined ? { format: FILE_INPUT_FORMAT } : {}),
      ...(f.widget ? { 'x-fengyu-widget': f.widget } : {}),
    };
  }
  return { ...schema, properties: props };
}

export function nodeHelp(entry: CatalogEntry | undefined): string | undefined {
  const help = entry?.flowNode?.help;
  return typeof help === 'string' && help.trim() ? help : undefined;
}
