import { Ajv } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Route schema compilation. A JSON body is taken as sent: a value of the wrong JSON type is a 400
 * naming the field, never silently coerced (`{"goal": 5}` is not the goal "5"). Query strings,
 * path parameters and headers are text on the wire, so their declared numbers and booleans are
 * parsed from that text.
 */
export function routeValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const base = { allErrors: true, strict: false, removeAdditional: false, useDefaults: true } as const;
  const exact = new Ajv({ ...base, coerceTypes: false });
  const fromText = new Ajv({ ...base, coerceTypes: 'array' });
  return ({ schema, httpPart }) => (httpPart === 'body' ? exact : fromText).compile(schema as object);
}
