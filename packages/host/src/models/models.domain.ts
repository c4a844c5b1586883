import { DEFAULT_OWNER } from '../http/auth';
import type { FilesResolver } from '../agent/agent.service';
import { ChatGates } from '../chat/chat-gates';
import { ChatService } from '../chat/chat.service';
import { ConversationRepository } from '../chat/conversation.repository';
import { MemoryRepository } from '../memory/memory.repository';
import { type MemorySettings, MemoryService, memorySection } from '../memory/memory.service';
import { MemoryToolSource } from '../memory/memory.tools';
import type { PermissionGuard } from '../permissions/types';
import type { CoreServices } from '../services';
import { BackendResolver } from './backend-resolver';
import { type BackendConfig, backendsSection, defaultBackendSection } from './backends.settings';
import { ModelStepExecutor } from './model-step.runner';
import { registerModelErrors } from './models.errors';
import { ModelPlanner } from './planner';
import { SecretStore } from './secret-store';

/**
 * The models domain's services: chat backends (settings `backends`, `defaultBackend`), the model
 * planner and model-step runner the agent runs with, AI Chat, and cross-session memory
 * (`memory`). The memory tools are returned, not registered: the composition root registers them
 * after the workflow tools, so the catalog lists sources in the order they always had.
 */

export interface ModelsDomain {
  resolver: BackendResolver;
  planner: ModelPlanner;
  modelSteps: ModelStepExecutor;
  memory: MemoryService;
  memoryTools: MemoryToolSource;
  chat: ChatService;
  conversations: ConversationRepository;
  chatGates: ChatGates;
}

export interface ModelsDeps extends Pick<CoreServices, 'config' | 'logger' | 'clock' | 'db' | 'settings' | 'catalog' | 'vault'> {
  /** Read at each call (a test host may swap the guard). */
  guard: () => PermissionGuard;
  resolveFiles: FilesResolver;
}

export function createModelsDomain(deps: ModelsDeps): ModelsDomain {
  registerModelErrors();
  // The SDK prints provider warnings to the console unless this (process-wide) hook is set;
  // route them into the host's structured log instead.
  const modelLog = deps.logger.child({ component: 'models' });
  globalThis.AI_SDK_LOG_WARNINGS = ({ warnings, provider, model }) => modelLog.debug({ provider, model, warnings }, 'model provider warnings');
  const secrets = new SecretStore(deps.vault, 'backend');
  deps.settings.registerSection('backends', backendsSection(secrets, DEFAULT_OWNER));
  deps.settings.registerSection('defaultBackend', defaultBackendSection);
  deps.settings.registerSection('memory', memorySection);
  const resolver = new BackendResolver(
    {
      backends: (owner) => deps.settings.section<BackendConfig[]>(owner, 'backends'),
      defaultBackend: (owner) => deps.settings.section<string | null>(owner, 'defaultBackend'),
      backendsNow: (owner) => deps.settings.sectionNow<BackendConfig[]>(owner, 'backends'),
    },
    secrets,
    deps.config.env,
    DEFAULT_OWNER,
  );
  const memory = new MemoryService(new MemoryRepository(deps.db), { memory: (owner) => deps.settings.section<MemorySettings>(owner, 'memory'), memoryNow: (owner) => deps.settings.sectionNow<MemorySettings>(owner, 'memory') }, deps.clock);
  const conversations = new ConversationRepository(deps.db);
  const chatGates = new ChatGates();
  const chat = new ChatService({
    repo: conversations,
    gates: chatGates,
    resolver,
    catalog: deps.catalog,
    guard: deps.guard,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'chat' }),
    resolveFiles: () => deps.resolveFiles,
    redactions: (owner) => deps.vault.view(owner).redactions,
  });
  return {
    resolver,
    planner: new ModelPlanner({ resolver, memories: (owner, goal) => memory.relevant(owner, goal), secretNames: (owner) => [...deps.vault.view(owner).names].sort() }),
    modelSteps: new ModelStepExecutor({ resolver, redactions: (owner) => deps.vault.view(owner).redactions }),
    memory,
    memoryTools: new MemoryToolSource(memory),
    chat,
    conversations,
    chatGates,
  };
}
