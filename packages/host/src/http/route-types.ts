import type { FastifyInstance, FastifyTypeProvider } from 'fastify';

/**
 * Request types derived from the routes' own JSON Schemas (declared `as const`), so a handler
 * reads `req.params.id` or `req.body.revision` with the type the validator has already checked,
 * never through a cast. Types only: validation, coercion and error messages stay with the
 * route validator compiler (`validation.ts`).
 *
 * The subset covers what the route schemas use: `type` (one or a list), `enum`, `const`,
 * `properties` + `required`, `items`, `anyOf`/`oneOf`. A property with a `default` is present
 * after validation (defaults are applied). Anything else reads as `unknown`.
 */
export type FromSchema<S> = S extends undefined ? unknown : S extends boolean ? unknown : Simplify<FromObjectSchema<S>>;

type FromObjectSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { anyOf: readonly (infer A)[] }
      ? FromSchema<A>
      : S extends { oneOf: readonly (infer A)[] }
        ? FromSchema<A>
        : S extends { type: readonly (infer T)[] }
          ? T extends JsonType
            ? FromType<T, S>
            : unknown
          : S extends { type: infer T extends JsonType }
            ? FromType<T, S>
            : S extends { properties: Record<string, unknown> }
              ? FromType<'object', S>
              : unknown;

type JsonType = 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'object' | 'array';

type FromType<T extends JsonType, S> = T extends 'string'
  ? string
  : T extends 'integer' | 'number'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? S extends { items: infer I }
            ? FromSchema<I>[]
            : unknown[]
          : S extends { properties: infer P extends Record<string, unknown> }
            ? ObjectOf<P, RequiredKeys<S, P>>
            : Record<string, unknown>;

/** Keys listed in `required`, and keys whose schema has a `default` (filled in by validation). */
type RequiredKeys<S, P> = (S extends { required: readonly (infer R)[] } ? R : never) | { [K in keyof P]: P[K] extends { default: unknown } ? K : never }[keyof P];

type ObjectOf<P, R> = { -readonly [K in keyof P as K extends R ? K : never]: FromSchema<P[K]> } & { -readonly [K in keyof P as K extends R ? never : K]?: FromSchema<P[K]> };

type Simplify<T> = T extends object ? (T extends readonly unknown[] ? T : { [K in keyof T]: T[K] }) : T;

/** The Fastify type provider that applies `FromSchema` to a route's params, query, headers and body. */
export interface SchemaTypes extends FastifyTypeProvider {
  readonly validator: FromSchema<this['schema']>;
  readonly serializer: unknown;
}

/** The app with request types derived from route schemas (the same instance; types only). */
export function typedRoutes(app: FastifyInstance) {
  return app.withTypeProvider<SchemaTypes>();
}
