/**
 * Environment allow-list for child processes that must not see the host's secrets (plugin
 * workers, commands of non-primary owners). Only these names pass from the host's
 * environment; everything else (API keys, FENGYU_TOKEN, cloud credentials, proxies with
 * passwords, agent sockets) stays behind. The caller adds its own variables (HOME, the plugin's
 * FENGYU_PLUGIN_* paths, FENGYU_RUN_ID) explicitly.
 */

export const ENV_ALLOW_LIST: readonly string[] = ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'USER', 'LOGNAME', 'SHELL'];

/** `LC_*` locale variables pass as well. */
const ALLOWED_PREFIX = /^LC_[A-Z_]+$/;

export function isAllowedEnvName(name: string): boolean {
  return ENV_ALLOW_LIST.includes(name) || ALLOWED_PREFIX.test(name);
}

/** The allow-listed part of `source`, with `extra` added on top (extra always wins). */
export function allowListedEnv(source: Readonly<Record<string, string | undefined>>, extra: Readonly<Record<string, string | undefined>> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) if (v !== undefined && isAllowedEnvName(k)) out[k] = v;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) out[k] = v;
  if (!out.PATH) out.PATH = '/usr/local/bin:/usr/bin:/bin';
  if (!out.LANG) out.LANG = 'C.UTF-8';
  return out;
}

/** The host's own credentials: never passed to a child process. */
const HOST_SECRETS = new Set(['FENGYU_TOKEN', 'FENGYU_SECRETS_KEY']);

/** The host's environment minus the host's own token and secrets key: what the primary owner's commands get. */
export function withoutHostToken(source: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) if (v !== undefined && !HOST_SECRETS.has(k)) out[k] = v;
  return out;
}
