import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Route schema compilation. A JSON body is taken as sent: a value of the wrong JSON type is a 400
 * naming the field, never silently coerced (`{"goal": 5}` is not the goal "5"). Query strings,
 * path parameters and headers are text on the wire, so their declared numbers and booleans are
 * parsed from that text.
 *
 * A route's validator is compiled when it first validates a request (so a start does not compile
 * every route's schemas before it can answer), or by `compileAll()`. Every schema is checked
 * against the JSON Schema meta-schema before it is compiled, as Ajv does by default; that check
 * uses one compiled meta-schema for both Ajv instances. A schema that does not compile fails its
 * route's requests with a 500, never lets them through unchecked.
 */
export interface RouteValidatorCompiler extends FastifySchemaCompiler<unknown> {
  /** Compiles every validator no request has needed yet; throws naming the first route whose schema does not compile. */
  compileAll(): void;
  /** How many validators are not compiled yet. */
  pending(): number;
}

type Validator = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; readonly schemaEnv?: unknown };

export function routeValidatorCompiler(): RouteValidatorCompiler {
  const base = { allErrors: true, strict: false, removeAdditional: false, useDefaults: true, validateSchema: false } as const;
  const exact = new Ajv({ ...base, coerceTypes: false });
  const fromText = new Ajv({ ...base, coerceTypes: 'array' });
  const waiting = new Map<() => unknown, string>();

  const compiler = (({ schema, httpPart, method, url }) => {
    const ajv = httpPart === 'body' ? exact : fromText;
    let fn: ValidateFunction | undefined;
    const compile = (): ValidateFunction => {
      if (!fn) {
        // the schema itself must be valid JSON Schema (throws naming what is wrong)
        exact.validateSchema(schema as object, true);
        fn = ajv.compile(schema as object);
        waiting.delete(compile);
      }
      return fn;
    };
    waiting.set(compile, `${method} ${url} (${httpPart})`);
    const validate = ((data: unknown, ctx?: unknown) => {
      const f = compile();
      const ok = ctx === undefined ? f(data) : f(data, ctx as Parameters<ValidateFunction>[1]);
      validate.errors = f.errors;
      return ok;
    }) as Validator;
    // Fastify passes the parent object along (so coercion and defaults can replace a root value)
    // to validators that carry Ajv's `schemaEnv`.
    Object.defineProperty(validate, 'schemaEnv', { get: () => compile().schemaEnv });
    return validate;
  }) as RouteValidatorCompiler;

  compiler.pending = () => waiting.size;
  compiler.compileAll = () => {
    for (const [compile, route] of [...waiting]) {
      try {
        compile();
      } catch (err) {
        throw new Error(`the schema of ${route} does not compile: ${(err as Error).message}`);
      }
    }
  };
  return compiler;
}
