import type { CoreServices } from '../../services';
import { createSafeFetch, type SafeFetch } from '../../net/safe-fetch';
import { deniedWebHost, parseRuleLines, type RuleLines } from '../../permissions/rules';
import type { SettingsStore } from '../../settings/settings.store';
import type { Tool, ToolSource } from '../tool';
import { createWebFetchTool, WEB_FETCH_DEFAULTS, WebFetchSettings } from './web-fetch';
import { createWebSearchTool, WebSearchSettings } from './web-search';

/**
 * Wiring of the two always-available web built-ins: their settings sections (`webFetch`,
 * `webSearch`) and a `builtin` tool source holding `web_fetch` and `web_search`.
 */

export interface WebToolDeps {
  settings: Pick<SettingsStore, 'section'>;
  /** The one outbound client; tests pass one with an injected resolver. */
  fetch?: SafeFetch;
}

export function createWebTools(deps: WebToolDeps): Tool[] {
  const fetch = deps.fetch ?? createSafeFetch();
  return [
    createWebFetchTool({
      fetch,
      settings: (owner) => deps.settings.section<WebFetchSettings>(owner, 'webFetch'),
      deniedHost: async (owner, url) => {
        const lines = (await deps.settings.section<RuleLines | undefined>(owner, 'permissions')) ?? { deny: [], ask: [], allow: [] };
        return deniedWebHost(parseRuleLines(lines).rules, 'web_fetch', url)?.text;
      },
    }),
    createWebSearchTool({ fetch, settings: (owner) => deps.settings.section<WebSearchSettings>(owner, 'webSearch') }),
  ];
}

/**
 * `web_fetch`, and `web_search` as the owner's settings make it: listed unavailable (with the
 * reason `web_search_unconfigured`) until the owner sets a search endpoint, so a plan that uses
 * it is refused at validation instead of failing when the step runs.
 */
export class WebToolSource implements ToolSource {
  readonly kind = 'builtin' as const;
  private readonly configured: readonly Tool[];
  private readonly unconfigured: readonly Tool[];

  constructor(
    tools: readonly Tool[],
    private readonly settings: Pick<SettingsStore, 'section' | 'sectionNow'>,
  ) {
    this.configured = tools;
    this.unconfigured = tools.map((t) => (t.name === 'web_search' ? { ...t, available: false, unavailableReason: 'web_search_unconfigured', invoke: t.invoke } : t));
  }

  private pick(search: WebSearchSettings | null | undefined): readonly Tool[] {
    return search?.url ? this.configured : this.unconfigured;
  }

  async list(owner: string): Promise<Tool[]> {
    return [...this.pick(await this.settings.section<WebSearchSettings | null>(owner, 'webSearch'))];
  }

  listNow(owner: string): readonly Tool[] | undefined {
    const search = this.settings.sectionNow<WebSearchSettings | null>(owner, 'webSearch');
    return search === undefined ? undefined : this.pick(search);
  }
}

export function registerWebSettings(settings: Pick<SettingsStore, 'registerSection'>): void {
  settings.registerSection('webFetch', { schema: WebFetchSettings, defaultValue: WEB_FETCH_DEFAULTS });
  settings.registerSection('webSearch', { schema: WebSearchSettings, defaultValue: null });
}

/** Registers the sections and the source on a host (called by the MCP/web domain registrar). */
export function registerWebTools(ctx: Pick<CoreServices, 'settings' | 'catalog'>, fetch?: SafeFetch): void {
  registerWebSettings(ctx.settings);
  ctx.catalog.register(new WebToolSource(createWebTools({ settings: ctx.settings, fetch }), ctx.settings));
}
