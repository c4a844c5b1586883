import { errorSpecOf, registerErrors } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import type { DomainRegistrar, HostContext } from '../../context';
import { FileRepository } from '../../files/file.repository';
import { systemResolver } from '../../net/safe-fetch';
import { FixedToolSource, type Tool, type ToolContext } from '../tool';
import type { WebFetchSettings } from '../builtin/web-fetch';
import { findChromium } from './chromium';
import { BrowserSessions, browserEnv } from './sessions';
import { type BrowserFileSink, createBrowserTools } from './tools';

/**
 * Assembly of the browser tools: a `builtin` tool source (present even without Chromium, then
 * `available: false`), the shared session pool closed with the host, run-end cleanup through the
 * run's event stream, screenshots registered as FileRefs, and the owner's deny rules applied to
 * every top-frame navigation.
 */

const TERMINAL = new Set(['complete', 'error', 'cancelled', 'interrupted']);

export function registerBrowserErrors(): void {
  registerErrors({
    browser_unavailable: errorSpecOf(503),
    browser_launch_failed: errorSpecOf(503, true),
    browser_sessions_exhausted: errorSpecOf(429, true),
    browser_no_page: errorSpecOf(409),
    browser_unknown_ref: errorSpecOf(404),
    browser_action_failed: errorSpecOf(502, true),
    browser_wait_timeout: errorSpecOf(504, true),
    browser_no_table: errorSpecOf(404),
    browser_bad_tab: errorSpecOf(400),
    browser_navigation_denied: errorSpecOf(403),
  });
}

export interface BrowserAssembly {
  sessions: BrowserSessions;
  tools: Tool[];
}

export interface BrowserOptions {
  maxSessions?: number;
  idleMs?: number;
}

/** Builds the pool and the tools of one host. */
export function createBrowser(ctx: HostContext, options: BrowserOptions = {}): BrowserAssembly {
  const chromium = () => findChromium({ override: ctx.config.env.FENGYU_CHROMIUM, path: ctx.config.env.PATH });
  const sessions = new BrowserSessions({
    executable: chromium,
    home: ctx.config.home,
    resolver: systemResolver,
    env: browserEnv(ctx.config.home, ctx.config.env),
    ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
    ...(options.idleMs ? { idleMs: options.idleMs } : {}),
    onRunEnd: (runId, close) =>
      ctx.events.subscribe(runId, (event) => {
        if (TERMINAL.has(event.type)) close();
      }),
  });
  const repo = new FileRepository(ctx.db);
  const files: BrowserFileSink = {
    async register(owner, file) {
      const row = { id: crypto.randomUUID(), owner, ...file, created_at: new Date(ctx.clock.now()).toISOString() };
      await repo.insert(row);
      return { id: row.id, name: row.name, size: row.size, sha256: row.sha256 };
    },
  };
  const navigationGate = (owner: string, tc: ToolContext) => async (url: string) => {
    const guard = ctx.guard;
    if (!guard.dryRun) return undefined;
    const d = await guard.dryRun({ owner, permissionMode: tc.permissionMode, call: { name: 'browser_navigate', effect: 'external', source: 'builtin', arguments: { url } } });
    return d.decision === 'deny' ? d.reason : undefined;
  };
  const tools = createBrowserTools({
    sessions,
    files,
    available: () => 'path' in chromium(),
    policy: async (owner) => ({ allowPrivateNetwork: (await ctx.settings.section<WebFetchSettings | null>(owner, 'webFetch'))?.allowPrivateNetwork === true }),
    navigationGate,
  });
  return { sessions, tools };
}

const pools = new WeakMap<HostContext, BrowserSessions>();

/** The session pool of a host (for inspection in tests and diagnostics). */
export function browserSessionsOf(ctx: HostContext): BrowserSessions | undefined {
  return pools.get(ctx);
}

/** The browser domain: registers the tools and closes every session and Chromium with the host. */
export const registerBrowser: DomainRegistrar = (ctx: HostContext, _app: FastifyInstance) => {
  registerBrowserErrors();
  const { sessions, tools } = createBrowser(ctx);
  pools.set(ctx, sessions);
  ctx.catalog.register(new FixedToolSource(tools));
  ctx.onClose(() => sessions.closeAll());
};
