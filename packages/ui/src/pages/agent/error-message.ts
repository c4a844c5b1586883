import { ApiError } from '../../api/client';

/**
 * The text a page shows for a failed call: the host's own localized message, or — when the host
 * could not be reached at all (the client's English fallback) — the shell's translated sentence.
 */
export function errorMessage(e: unknown, t: (key: string) => string): string {
  if (e instanceof ApiError) return e.status === 0 || e.code === 'host_unreachable' ? t('common.banner.unreachable') : e.message;
  return e instanceof Error ? e.message : String(e);
}
