/**
 * The access token: the host prints `http://127.0.0.1:7878/#token=…`; on load the token is moved
 * from the address into local storage and stripped from the URL (so it is not left in history).
 */

export const TOKEN_KEY = 'fengyu.token';

export interface TokenStore {
  get(): string | undefined;
  set(token: string): void;
  clear(): void;
}

export function createTokenStore(storage: Storage): TokenStore {
  return {
    get: () => storage.getItem(TOKEN_KEY) ?? undefined,
    set: (token) => storage.setItem(TOKEN_KEY, token.trim()),
    clear: () => storage.removeItem(TOKEN_KEY),
  };
}

/** Takes `token=` out of a location hash; returns the token and the hash without it. */
export function takeTokenFromHash(hash: string): { token?: string; rest: string } {
  const body = hash.replace(/^#/, '');
  if (!body) return { rest: '' };
  const params = new URLSearchParams(body);
  const token = params.get('token') ?? undefined;
  params.delete('token');
  const rest = params.toString();
  return { token: token || undefined, rest: rest ? `#${rest}` : '' };
}

/** Captures the token from `window.location` and rewrites the address without it. */
export function captureToken(win: Window, store: TokenStore): void {
  const { token, rest } = takeTokenFromHash(win.location.hash);
  if (!token) return;
  store.set(token);
  win.history.replaceState(win.history.state, '', `${win.location.pathname}${win.location.search}${rest}`);
}
