/** The fixed choices of the settings document's sections (the host validates against them; the UI offers them). */

/** When a lifecycle hook runs. */
export const HOOK_EVENTS = ['pre_tool_use', 'post_tool_use', 'post_tool_use_failure', 'run_complete', 'run_error'] as const;
/** One of `HOOK_EVENTS`. */
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The model providers a backend may name. */
export const PROVIDERS = ['openai-compatible', 'openai', 'anthropic'] as const;
/** One of `PROVIDERS`. */
export type ProviderKind = (typeof PROVIDERS)[number];
