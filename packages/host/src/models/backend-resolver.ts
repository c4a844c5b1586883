import { FengYuError } from '@fengyu/protocol';
import type { LanguageModel } from 'ai';
import { type BackendConfig, keyEnvProblem } from './backends.settings';
import type { SecretStore } from './secret-store';

/**
 * Picks the chat backend for a call and builds its AI SDK language model. Order: the caller's
 * `backend` (must exist), else `defaultBackend` when it names a configured backend, else the
 * first configured backend. `model` overrides the backend's model id.
 */

export interface BackendSettingsReader {
  backends(owner: string): Promise<BackendConfig[]>;
  defaultBackend(owner: string): Promise<string | null>;
  /** What `backends` would answer, when the owner's settings are already read; else undefined. */
  backendsNow?(owner: string): BackendConfig[] | undefined;
}

export interface ResolvedBackend {
  id: string;
  provider: BackendConfig['provider'];
  modelId: string;
  model: LanguageModel;
}

export class BackendResolver {
  constructor(
    private readonly settings: BackendSettingsReader,
    private readonly secrets: SecretStore,
    private readonly env: Readonly<Record<string, string | undefined>>,
    /** The owner whose backends may name an environment variable (`apiKeyEnv`). */
    private readonly primaryOwner: string,
  ) {}

  /** The backend config a call would use, or undefined when none fits. */
  async pick(owner: string, backendId?: string): Promise<BackendConfig | undefined> {
    const list = await this.settings.backends(owner);
    if (backendId) return list.find((b) => b.id === backendId);
    const preferred = await this.settings.defaultBackend(owner);
    return list.find((b) => b.id === preferred) ?? list[0];
  }

  /**
   * Whether `pick` would find a backend, when the owner's settings are at hand (read from them each
   * time: a saved change applies to the next call); else undefined.
   */
  pickableNow(owner: string, backendId?: string): boolean | undefined {
    const list = this.settings.backendsNow?.(owner);
    if (list === undefined) return undefined;
    // without a named backend, `pick` finds the default or the first one: any configured backend
    return backendId ? list.some((b) => b.id === backendId) : list.length > 0;
  }

  /** Resolves a usable model or throws `no_chat_backend` / `unknown_backend` / `backend_key_missing`. */
  async resolve(owner: string, backendId?: string, modelId?: string): Promise<ResolvedBackend> {
    const config = await this.pick(owner, backendId);
    if (!config) {
      if (!backendId) throw new FengYuError('no_chat_backend');
      const ids = (await this.settings.backends(owner)).map((b) => b.id);
      throw new FengYuError('unknown_backend', { backend: backendId, ids: ids.join(', ') || '-' });
    }
    const id = modelId || config.model;
    return { id: config.id, provider: config.provider, modelId: id, model: await this.build(owner, config, id) };
  }

  private apiKey(owner: string, config: BackendConfig): string | undefined {
    if (config.apiKeyEnv) {
      // checked again at use: a document saved before the rule, or edited in the database
      const refused = keyEnvProblem(config, owner, this.primaryOwner);
      if (refused) throw new FengYuError(refused.code, refused.params ?? {});
      return this.env[config.apiKeyEnv] || undefined;
    }
    if (config.apiKey !== undefined) return this.secrets.get(owner, config.id);
    return undefined;
  }

  /** The provider packages are loaded with the first model built from them. */
  private async build(owner: string, config: BackendConfig, modelId: string): Promise<LanguageModel> {
    // a stored key another host of a shared database rotated or removed is read again before its use
    if (config.apiKey !== undefined && !config.apiKeyEnv) await this.secrets.fresh(owner);
    const apiKey = this.apiKey(owner, config);
    if (config.provider === 'openai-compatible') {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      const provider = createOpenAICompatible({
        name: `fengyu-${config.id}`,
        baseURL: config.baseURL ?? '',
        ...(apiKey ? { apiKey } : {}),
        includeUsage: true,
      });
      return provider.chatModel(modelId);
    }
    if (!apiKey) {
      throw new FengYuError('backend_key_missing', { backend: config.id, env: config.apiKeyEnv ?? '-' });
    }
    if (config.provider === 'openai') {
      const { createOpenAI } = await import('@ai-sdk/openai');
      return createOpenAI({ apiKey, ...(config.baseURL ? { baseURL: config.baseURL } : {}) }).chat(modelId);
    }
    const { createAnthropic } = await import('@ai-sdk/anthropic');
    return createAnthropic({ apiKey, ...(config.baseURL ? { baseURL: config.baseURL } : {}) })(modelId);
  }
}
