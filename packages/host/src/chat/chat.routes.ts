import { FengYuError } from '@fengyu/protocol';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ChatGates } from './chat-gates';
import type { ChatFrame, ChatService } from './chat.service';
import type { ConversationRepository } from './conversation.repository';
import { openSseResponse } from '../events/sse';
import { typedRoutes } from '../http/route-types';

/**
 * Chat routes. `POST /api/chat` answers with an SSE stream (frames documented in
 * docs/chat.md); every check that can fail (backend, conversation, files) fails with a normal
 * JSON error before the stream starts.
 */

const idParam = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 100 } } } as const;

/** The fields of one chat turn, shared by `POST /api/chat` and the builder's AI panel. */
export const chatTurnProperties = {
  conversationId: { type: 'string', minLength: 1, maxLength: 100 },
  message: { type: 'string', minLength: 1, maxLength: 100_000 },
  backend: { type: 'string', minLength: 1, maxLength: 64 },
  model: { type: 'string', minLength: 1, maxLength: 200 },
  permissionMode: { type: 'string', enum: ['ask', 'approve-for-me', 'full-access'] },
} as const;

const chatBody = {
  type: 'object',
  required: ['message'],
  additionalProperties: false,
  properties: { ...chatTurnProperties, files: { type: 'array', maxItems: 32, items: { type: 'object' } } },
} as const;

export function registerChatRoutes(app: FastifyInstance, chat: ChatService, repo: ConversationRepository, gates: ChatGates, heartbeatMs: number): void {
  const api = typedRoutes(app);
  api.post('/api/chat', { schema: { summary: 'Send a chat message; the answer streams as SSE (start, token, tool, approval_requested, done, error)', tags: ['chat'], body: chatBody } }, async (req, reply) => {
    const turn = await chat.prepare(req.owner, req.body);
    const abort = new AbortController();
    const send = openStream(reply, () => abort.abort(), heartbeatMs);
    await chat.stream(turn, send, abort.signal);
    send.end();
  });

  api.get(
    '/api/chat/conversations',
    { schema: { summary: 'The caller\'s conversations, most recently active first', tags: ['chat'], querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 200 } } } as const } },
    async (req) => ({ conversations: await repo.list(req.owner, req.query.limit ?? 50) }),
  );

  api.get('/api/chat/conversations/:id', { schema: { summary: 'One conversation with its messages', tags: ['chat'], params: idParam } }, async (req) => {
    const { id } = req.params;
    const conversation = await repo.get(req.owner, id);
    if (!conversation) throw new FengYuError('conversation_not_found', { conversationId: id });
    return { ...conversation, messages: await repo.messages(id) };
  });

  api.delete('/api/chat/conversations/:id', { schema: { summary: 'Delete a conversation and its messages', tags: ['chat'], params: idParam } }, async (req) => {
    const { id } = req.params;
    if (!(await repo.remove(req.owner, id))) throw new FengYuError('conversation_not_found', { conversationId: id });
    return { deleted: true };
  });

  api.post(
    '/api/chat/:id/approve',
    {
      schema: {
        summary: 'Answer a pending tool approval (the chat confirmation card)',
        tags: ['chat'],
        params: idParam,
        body: { type: 'object', required: ['gateId', 'approve'], additionalProperties: false, properties: { gateId: { type: 'string', minLength: 1, maxLength: 100 }, approve: { type: 'boolean' } } } as const,
      },
    },
    async (req) => {
      const { id } = req.params;
      const { gateId, approve } = req.body;
      gates.resolve(req.owner, id, gateId, approve);
      return { gateId, approved: approve };
    },
  );
}

export type Sender = ((frame: ChatFrame, data: Record<string, unknown>) => void) & { end: () => void };

/** Hijacks the reply into an SSE stream; `onGone` fires when the client disconnects early; a `: keep-alive` comment every `heartbeatMs`. */
export function openStream(reply: FastifyReply, onGone: () => void, heartbeatMs: number): Sender {
  const res = openSseResponse(reply);
  let seq = 0;
  let ended = false;
  const beat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
  const finish = () => {
    if (ended) return;
    ended = true;
    clearInterval(beat);
    res.end();
  };
  res.on('close', () => {
    if (!ended) {
      finish();
      onGone();
    }
  });
  const send = ((frame, data) => {
    if (ended) return;
    res.write(`id: ${++seq}\nevent: ${frame}\ndata: ${JSON.stringify(data)}\n\n`);
  }) as Sender;
  send.end = finish;
  return send;
}
