import { FengYuError, isFengYuError, localize } from '@fengyu/protocol';
import type { Route } from 'playwright-core';
import { type AddressPolicy, checkUrl } from '../../net/address-policy';

/**
 * Route interception of every request a browser context makes (navigations, sub-resources,
 * form posts, fetch/XHR): the URL is checked against the address policy of `web_fetch`
 * (scheme, credentials, literal private addresses and internal names) and top-frame navigations
 * against the owner's deny rules, before anything leaves the browser. What passes continues
 * through the session's policy proxy (`proxy.ts`), which resolves the name once, checks every
 * address and pins the connection — it also sees the redirect hops Chromium follows itself.
 */

export interface Blocked {
  url: string;
  reason: string;
  /** True when the refused request was a navigation of the top frame. */
  navigation: boolean;
  /** `policy`: the address policy refused it; `rule`: a permission deny rule did. */
  by: 'policy' | 'rule';
}

export interface RequestGuardDeps {
  /** The session's current policy (its owner's `webFetch.allowPrivateNetwork`). */
  policy: () => AddressPolicy;
  /** Called for each refused request. */
  onBlocked: (b: Blocked) => void;
  /** Refusal reason for a top-frame navigation (deny rules), or undefined to let it go. */
  navigationGate?: (url: string) => Promise<string | undefined>;
}

function reasonOf(e: unknown): string {
  if (isFengYuError(e)) {
    const err = e as FengYuError;
    return typeof err.params.reason === 'string' ? err.params.reason : localize(err.code, err.params, 'en');
  }
  return e instanceof Error ? e.message : String(e);
}

/** A popup's first navigation has no frame yet: it is a top-level one. */
function isTopFrame(request: ReturnType<Route['request']>): boolean {
  try {
    return request.frame().parentFrame() === null;
  } catch {
    return true;
  }
}

/** The route handler of one browser context. */
export function createRequestGuard(deps: RequestGuardDeps): (route: Route) => Promise<void> {
  return async (route) => {
    const request = route.request();
    const raw = request.url();
    const navigation = request.isNavigationRequest() && isTopFrame(request);
    const refuse = async (reason: string, by: Blocked['by'] = 'policy') => {
      deps.onBlocked({ url: raw, reason, navigation, by });
      await route.abort('blockedbyclient').catch(() => {});
    };
    let url: URL;
    try {
      url = checkUrl(raw, deps.policy());
    } catch (e) {
      return refuse(reasonOf(e));
    }
    if (navigation && deps.navigationGate) {
      const denial = await deps.navigationGate(url.href).catch((e: unknown) => reasonOf(e));
      if (denial) return refuse(denial, 'rule');
    }
    await route.continue().catch(() => {});
  };
}

/** The error for a navigation that the policy (or a deny rule) refused. */
export function blockedError(b: Blocked): FengYuError {
  if (b.by === 'rule') return new FengYuError('browser_navigation_denied', { url: b.url, reason: b.reason });
  return new FengYuError('web_fetch_blocked', { url: b.url, reason: b.reason });
}
