import Fastify from 'fastify';
import { describe, expectTypeOf, it } from 'vitest';
import { type FromSchema, typedRoutes } from '../../src/http/route-types';

/** Request types follow the route schemas (checked by the typechecker; the run only registers routes). */

const params = { type: 'object', required: ['id', 'version'], properties: { id: { type: 'string' }, version: { type: 'integer' } } } as const;
const query = { type: 'object', properties: { limit: { type: 'integer', default: 50 }, cursor: { type: 'string' }, flag: { type: 'boolean' } } } as const;
const body = {
  type: 'object',
  required: ['runs'],
  properties: {
    runs: { type: 'array', items: { type: 'object', properties: { goal: { type: 'string' } } } },
    mode: { type: 'string', enum: ['read-only', 'full'] },
    graph: { type: ['object', 'null'] },
    version: { anyOf: [{ type: 'integer' }, { type: 'string', enum: ['draft'] }] },
    loose: { description: 'no type: anything' },
  },
} as const;

describe('route types from schemas', () => {
  it('derives params, query and body', () => {
    expectTypeOf<FromSchema<typeof params>>().toEqualTypeOf<{ id: string; version: number }>();
    expectTypeOf<FromSchema<typeof query>>().toEqualTypeOf<{ limit: number; cursor?: string; flag?: boolean }>();
    expectTypeOf<FromSchema<typeof body>>().toEqualTypeOf<{
      runs: { goal?: string }[];
      mode?: 'read-only' | 'full';
      graph?: Record<string, unknown> | null;
      version?: number | 'draft';
      loose?: unknown;
    }>();
    expectTypeOf<FromSchema<undefined>>().toBeUnknown();
  });

  it('types a handler’s request', async () => {
    const app = Fastify();
    typedRoutes(app).post('/x/:id/:version', { schema: { params, querystring: query, body } }, async (req) => {
      expectTypeOf(req.params.version).toEqualTypeOf<number>();
      expectTypeOf(req.query.limit).toEqualTypeOf<number>();
      expectTypeOf(req.body.runs).toEqualTypeOf<{ goal?: string }[]>();
      return {};
    });
    await app.close();
  });
});
