import { ChatGates } from '../chat/chat-gates';
import { registerChatRoutes } from '../chat/chat.routes';
import { ChatService } from '../chat/chat.service';
import { ConversationRepository } from '../chat/conversation.repository';
import type { DomainRegistrar } from '../context';
import { MemoryRepository } from '../memory/memory.repository';
import { type MemorySettings, MemoryService, memorySection } from '../memory/memory.service';
import { MemoryToolSource } from '../memory/memory.tools';
import { BackendResolver } from './backend-resolver';
import { type BackendConfig, backendsSection, defaultBackendSection } from './backends.settings';
import { ModelStepExecutor } from './model-step.runner';
import { registerModelErrors } from './models.errors';
import { ModelPlanner } from './planner';
import { SecretStore } from './secret-store';

/**
 * The models domain: chat backends (settings `backends`, `defaultBackend`), the model planner and
 * model-step runner behind the agent's seams, AI Chat, and cross-session memory (`memory`).
 * Registered last, so chat sees every other domain's tool sources.
 */
export const registerModels: DomainRegistrar = (ctx, app) => {
  registerModelErrors();
  // The SDK prints provider warnings to the console unless this (process-wide) hook is set;
  // route them into the host's structured log instead.
  const modelLog = ctx.logger.child({ component: 'models' });
  globalThis.AI_SDK_LOG_WARNINGS = ({ warnings, provider, model }) => modelLog.debug({ provider, model, warnings }, 'model provider warnings');
  const secrets = new SecretStore(ctx.config.home);
  ctx.settings.registerSection('backends', backendsSection(secrets));
  ctx.settings.registerSection('defaultBackend', defaultBackendSection);
  ctx.settings.registerSection('memory', memorySection);

  const resolver = new BackendResolver(
    {
      backends: (owner) => ctx.settings.section<BackendConfig[]>(owner, 'backends'),
      defaultBackend: (owner) => ctx.settings.section<string | null>(owner, 'defaultBackend'),
    },
    secrets,
    ctx.config.env,
  );

  const memory = new MemoryService(new MemoryRepository(ctx.db), { memory: (owner) => ctx.settings.section<MemorySettings>(owner, 'memory') }, ctx.clock);
  ctx.catalog.register(new MemoryToolSource(memory));

  ctx.agent.setPlanner(new ModelPlanner({ resolver, memories: (owner, goal) => memory.relevant(owner, goal) }));
  ctx.agent.setModelStepRunner(new ModelStepExecutor({ resolver }));

  const repo = new ConversationRepository(ctx.db);
  const gates = new ChatGates();
  const chat = new ChatService({
    repo,
    gates,
    resolver,
    catalog: ctx.catalog,
    guard: () => ctx.guard,
    clock: ctx.clock,
    logger: ctx.logger.child({ component: 'chat' }),
    resolveFiles: () => ctx.agent.getFilesResolver(),
  });
  registerChatRoutes(app, chat, repo, gates);
};
