import { type Component, type InjectionKey, inject, type Ref, shallowRef } from 'vue';

/**
 * A small history-mode router (the UI needs a handful of routes; no dependency for it):
 * `/flows/:id` patterns, lazy page components, and leave guards for unsaved changes.
 */

export interface RouteDef {
  name: string;
  path: string;
  component: () => Promise<{ default: Component }>;
}

export interface CurrentRoute {
  def: RouteDef | undefined;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** Returns false to stay (e.g. the user kept unsaved edits). */
export type LeaveGuard = (to: string) => boolean | Promise<boolean>;

export interface Router {
  current: Ref<CurrentRoute>;
  push(to: string): Promise<boolean>;
  replace(to: string): Promise<boolean>;
  addLeaveGuard(guard: LeaveGuard): () => void;
  resolve(path: string): CurrentRoute;
}

export const ROUTER: InjectionKey<Router> = Symbol('router');

export function useRouter(): Router {
  const r = inject(ROUTER);
  if (!r) throw new Error('router not provided');
  return r;
}

function compilePattern(path: string): { re: RegExp; keys: string[] } {
  const keys: string[] = [];
  const source = path
    .split('/')
    .map((seg) => {
      if (seg.startsWith(':')) {
        keys.push(seg.slice(1));
        return '([^/]+)';
      }
      return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { re: new RegExp(`^${source}/?$`), keys };
}

export function createRouter(routes: RouteDef[], win: Window, fallback = '/flows'): Router {
  const compiled = routes.map((def) => ({ def, ...compilePattern(def.path) }));
  const resolve = (full: string): CurrentRoute => {
    const url = new URL(full, 'http://x');
    for (const c of compiled) {
      const m = c.re.exec(url.pathname);
      if (m) return { def: c.def, path: url.pathname, params: Object.fromEntries(c.keys.map((k, i) => [k, decodeURIComponent(m[i + 1] ?? '')])), query: url.searchParams };
    }
    return { def: undefined, path: url.pathname, params: {}, query: url.searchParams };
  };
  const here = () => `${win.location.pathname}${win.location.search}`;
  const initial = win.location.pathname === '/' || win.location.pathname === '' ? fallback : here();
  if (initial !== here()) win.history.replaceState(null, '', initial + win.location.hash);
  const current = shallowRef(resolve(initial));
  const guards = new Set<LeaveGuard>();
  const allowed = async (to: string) => {
    for (const g of guards) if (!(await g(to))) return false;
    return true;
  };
  const go = async (to: string, mode: 'push' | 'replace') => {
    if (to === here()) return true;
    if (resolve(to).path !== current.value.path && !(await allowed(to))) return false;
    win.history[mode === 'push' ? 'pushState' : 'replaceState'](null, '', to);
    current.value = resolve(to);
    return true;
  };
  win.addEventListener('popstate', async () => {
    const to = here();
    if (resolve(to).path !== current.value.path && !(await allowed(to))) {
      win.history.pushState(null, '', current.value.path + (current.value.query.size ? `?${current.value.query}` : ''));
      return;
    }
    current.value = resolve(to);
  });
  return {
    current,
    push: (to) => go(to, 'push'),
    replace: (to) => go(to, 'replace'),
    addLeaveGuard(guard) {
      guards.add(guard);
      return () => guards.delete(guard);
    },
    resolve,
  };
}
