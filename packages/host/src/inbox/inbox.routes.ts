import type { DomainRegistrar } from '../context';
import { openSseResponse } from '../events/sse';
import { typedRoutes } from '../http/route-types';

/**
 * The inbox's HTTP surface: the owner's pending items, one answer path, and a live
 * stream (`?token=` accepted on this GET route: it is on the front door's exact-path list).
 */

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 100 } } } as const;
const listQuery = { type: 'object', additionalProperties: false, properties: { cursor: { type: 'string', maxLength: 400 } } } as const;
const streamQuery = { type: 'object', properties: { token: { type: 'string' } } } as const;

export const registerInbox: DomainRegistrar = (ctx, app) => {
  const inbox = ctx.inbox;
  const api = typedRoutes(app);
  const tags = ['inbox'];

  api.get('/api/inbox', { schema: { summary: "The owner's pending plan gates, step gates and inputs, oldest first", tags, querystring: listQuery } }, async (req) => inbox.list(req.owner, req.query.cursor));

  api.get('/api/inbox/count', { schema: { summary: 'How many items wait in the owner\'s inbox', tags } }, async (req) => ({ count: await inbox.count(req.owner) }));

  api.post('/api/inbox/:id', { schema: { summary: 'Answer an item: a run approve body for approvals, {values} for inputs (404 another owner\'s, 409 settled)', tags, params: idParams } }, async (req) =>
    inbox.answer(req.owner, req.params.id, req.body),
  );

  api.get('/api/inbox/stream', { schema: { summary: 'SSE: inbox_added {item}, inbox_removed {id, outcome}', tags, querystring: streamQuery } }, async (req, reply) => {
    const res = openSseResponse(reply);
    let seq = 0;
    const stop = inbox.subscribe(req.owner, (change) => {
      seq += 1;
      const [type, data] = change.kind === 'added' ? ['inbox_added', { item: change.item }] : ['inbox_removed', { id: change.id, outcome: change.outcome }];
      res.write(`id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    }, () => res.end());
    const beat = setInterval(() => res.write(': keep-alive\n\n'), ctx.config.sseHeartbeatMs);
    res.on('close', () => {
      clearInterval(beat);
      stop();
    });
  });
};
