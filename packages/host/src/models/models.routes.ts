import { registerChatRoutes } from '../chat/chat.routes';
import type { DomainRegistrar } from '../context';

/** HTTP surface of the models domain (services in `models.domain.ts`): AI Chat. */
export const registerModels: DomainRegistrar = (ctx, app) => {
  const { chat, conversations, chatGates } = ctx.models;
  registerChatRoutes(app, chat, conversations, chatGates, ctx.config.sseHeartbeatMs);
};
