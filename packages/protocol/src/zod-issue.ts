import type { z } from 'zod';
import type { LocalText } from './i18n/index';

/**
 * A zod issue (plan and workflow document shapes) as the same plain sentence a JSON Schema issue
 * gets (`schema_*` messages): the field named by its property name, with its item number when
 * it sits in a list; the rule said in words, in any language.
 */
export function zodIssueText(issue: z.core.$ZodIssue): LocalText {
  const path = issue.path.map(String);
  const named = path.filter((s) => !/^\d+$/.test(s));
  const index = [...path].reverse().find((s) => /^\d+$/.test(s));
  let field: LocalText | string = named.at(-1) ?? { $message: 'schema_the_value' };
  if (index !== undefined) field = { $message: 'schema_item', params: { field, index: String(Number(index) + 1) } };
  const m = (code: string, more: Record<string, unknown> = {}): LocalText => ({ $message: code, params: { field, ...more } });
  const i = issue as unknown as Record<string, unknown>;
  switch (issue.code) {
    case 'invalid_type':
      if (i.input === undefined) return m('schema_required');
      return TYPE_CODES[String(i.expected)] ? m(TYPE_CODES[String(i.expected)] as string) : m('schema_invalid', { rule: issue.message });
    case 'too_small':
      if (Number(i.minimum) === 1 && (i.origin === 'string' || i.origin === 'array')) return m('schema_empty');
      return m(i.origin === 'string' ? 'schema_min_length' : i.origin === 'array' ? 'schema_min_items' : 'schema_minimum', { limit: String(i.minimum) });
    case 'too_big':
      return m(i.origin === 'string' ? 'schema_max_length' : i.origin === 'array' ? 'schema_max_items' : 'schema_maximum', { limit: String(i.maximum) });
    case 'invalid_value':
      return m('schema_enum', { allowed: (i.values as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ') });
    case 'unrecognized_keys':
      return { $message: 'schema_extra', params: { field: (i.keys as string[]).join(', ') } };
    case 'invalid_union':
      return m('schema_one_of');
    case 'invalid_format':
      return m('schema_format', { format: String(i.format) });
    default:
      return m('schema_invalid', { rule: issue.message });
  }
}

const TYPE_CODES: Record<string, string> = { string: 'schema_type_string', number: 'schema_type_number', int: 'schema_type_integer', boolean: 'schema_type_boolean', object: 'schema_type_object', array: 'schema_type_array', null: 'schema_type_null' };
