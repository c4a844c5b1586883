import { z } from 'zod';
import type { SettingsStore } from './settings.store';

/**
 * The `backend` settings section: `callTimeoutSeconds`, the per-call timeout of a tool that
 * declares none (the seed's `backend.callTimeoutSeconds`; a tool's own `timeoutSeconds` and a
 * step's `timeoutMs` still win). Whole seconds in [1, 600], the range a tool's declared timeout is
 * clamped to; the host's configured default (120) when the owner has not set it.
 */
export const BackendSettings = z.object({ callTimeoutSeconds: z.number().int().min(1).max(600) }).strict();
export type BackendSettings = z.infer<typeof BackendSettings>;

export function registerBackendSettings(settings: Pick<SettingsStore, 'registerSection'>, fallbackSeconds: number): void {
  settings.registerSection<BackendSettings>('backend', { schema: BackendSettings, defaultValue: { callTimeoutSeconds: fallbackSeconds } });
}

/** The owner's default tool-call timeout in seconds (read at each call, so a change applies to the next call). */
export function callTimeoutOf(settings: Pick<SettingsStore, 'section'>, fallbackSeconds: number): (owner: string) => Promise<number> {
  return async (owner) => (await settings.section<BackendSettings | undefined>(owner, 'backend'))?.callTimeoutSeconds ?? fallbackSeconds;
}
