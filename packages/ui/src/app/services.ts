import { type InjectionKey, inject } from 'vue';
import { type ApiClient, createApiClient } from '../api/client';
import { createTokenStore, type TokenStore } from '../api/token';
import { secretsApi } from '../api/secrets.api';
import { agentApi, filesApi, workflowsApi } from '../api/workflows.api';

/** What pages and stores need from the outside world, created once in main.ts and provided. */
export interface Services {
  api: ApiClient;
  tokens: TokenStore;
  workflows: ReturnType<typeof workflowsApi>;
  agent: ReturnType<typeof agentApi>;
  files: ReturnType<typeof filesApi>;
  secrets: ReturnType<typeof secretsApi>;
}

export const SERVICES: InjectionKey<Services> = Symbol('services');

export function createServices(opts: { storage: Storage; locale: () => string; onStatus: Parameters<typeof createApiClient>[0]['onStatus'] }): Services {
  const tokens = createTokenStore(opts.storage);
  const api = createApiClient({ token: () => tokens.get(), locale: opts.locale, onStatus: opts.onStatus });
  return { api, tokens, workflows: workflowsApi(api), agent: agentApi(api), files: filesApi(api), secrets: secretsApi(api) };
}

export function useServices(): Services {
  const s = inject(SERVICES);
  if (!s) throw new Error('services not provided');
  return s;
}
