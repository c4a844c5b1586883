import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { AddressPolicy } from '../../net/address-policy';
import type { Resolver } from '../../net/http-hop';
import { type Blocked, createRequestGuard } from './network';
import { type PolicyProxy, startPolicyProxy } from './proxy';

/**
 * Browser state: one shared Chromium process, launched on first use and closed with the host,
 * and one isolated context (own cookies, storage and cache) per session — a run, or a chat
 * conversation. A session closes when its run ends, after an idle timeout, on `browser_close`,
 * or with the host. At most `maxSessions` are open at once; one more is refused with
 * `browser_sessions_exhausted` rather than evicting someone else's pages.
 */

export const DEFAULT_MAX_SESSIONS = 8;
export const DEFAULT_IDLE_MS = 10 * 60_000;
/** Refused top-frame navigations and sub-resources kept per session (the latest ones). */
const MAX_BLOCKED = 20;

/** Chromium flags: headless, no first-run chatter, nothing fetched in the background, no WebRTC leaks. */
export const CHROMIUM_ARGS = [
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-quic',
  '--disable-gpu',
  '--metrics-recording-only',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--proxy-bypass-list=<-loopback>',
];

export interface SessionKey {
  owner: string;
  runId?: string;
  conversationId?: string;
}

export interface BrowserSession {
  readonly key: string;
  readonly owner: string;
  readonly runId?: string;
  readonly context: BrowserContext;
  /** Tabs in opening order; `current` indexes the active one. */
  readonly pages: Page[];
  current: number;
  /** The owner's policy, refreshed on every tool call. */
  policy: AddressPolicy;
  /** Scratch directory of the session (screenshots); created on first use. */
  readonly dir: string;
  /** Latest refused requests, newest last; `seq` counts every refusal of the session. */
  readonly blocked: Array<Blocked & { seq: number }>;
  blockedSeq: number;
  /** Tool calls of this session run one at a time. */
  queue: Promise<unknown>;
  /** Downloads the page tried to start (always refused), newest last. */
  readonly downloads: Array<{ url: string; suggestedFilename: string; seq: number }>;
  downloadSeq: number;
}

export interface SessionInit {
  policy: AddressPolicy;
  /**
   * The owner's deny rules: judged for every top-frame navigation (clicks, scripts) before it
   * leaves the browser, and by the session proxy for every request and tunnel (the redirect hops
   * Chromium follows itself, sub-resources).
   */
  navigationGate?: (url: string) => Promise<string | undefined>;
}

export interface BrowserSessionsDeps {
  /** The Chromium executable, or the reason there is none. */
  executable: () => { path: string } | { missing: string };
  /** `$FENGYU_HOME`: session scratch lives under `runs/<runId>/browser` or `browser/<key>`. */
  home: string;
  resolver: Resolver;
  maxSessions?: number;
  idleMs?: number;
  /** Called when a run's session must close because the run ended (subscribes to its events). */
  onRunEnd?: (runId: string, close: () => void) => () => void;
  /** The browser process environment: only these variables (never the host's secrets). */
  env?: Record<string, string>;
  logger?: { warn(obj: unknown, msg: string): void };
}

interface Entry {
  session?: BrowserSession;
  opening?: Promise<BrowserSession>;
  timer?: ReturnType<typeof setTimeout>;
  unsubscribe?: () => void;
  proxy?: PolicyProxy;
  /** Tool calls in progress: the idle timer runs only while this is 0. */
  busy: number;
  abort: AbortController;
}

export function sessionKeyOf(k: SessionKey): string {
  if (k.runId) return `run:${k.runId}`;
  if (k.conversationId) return `chat:${k.conversationId}`;
  return `owner:${k.owner}`;
}

/** A minimal environment for the browser process, built from scratch (no inherited secrets). */
export function browserEnv(home: string, base: Record<string, string | undefined> = {}): Record<string, string> {
  const dir = join(home, 'browser', 'process');
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    LANG: base.LANG && /^[\w.@-]+$/.test(base.LANG) ? base.LANG : 'C.UTF-8',
    ...(base.TZ && /^[\w/+-]+$/.test(base.TZ) ? { TZ: base.TZ } : {}),
  };
}

export class BrowserSessions {
  private browser?: Promise<Browser>;
  private refuser?: Promise<{ server: Server; port: number }>;
  private readonly entries = new Map<string, Entry>();
  private closed = false;
  readonly maxSessions: number;
  readonly idleMs: number;

  constructor(private readonly deps: BrowserSessionsDeps) {
    this.maxSessions = deps.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.idleMs = deps.idleMs ?? DEFAULT_IDLE_MS;
  }

  /** Number of open (or opening) sessions. */
  get size(): number {
    return this.entries.size;
  }

  has(key: SessionKey): boolean {
    return this.entries.get(sessionKeyOf(key))?.session !== undefined;
  }

  /**
   * The session of `key`, opened when missing, held for one tool call: its idle timer stops until
   * `release(key)`. Refreshes its policy.
   */
  async open(key: SessionKey, init: SessionInit): Promise<BrowserSession> {
    if (this.closed) throw new FengYuError('browser_action_failed', { action: 'open', reason: 'the host is shutting down' });
    const id = sessionKeyOf(key);
    let entry = this.entries.get(id);
    if (!entry) {
      if (this.entries.size >= this.maxSessions) {
        throw new FengYuError('browser_sessions_exhausted', { limit: this.maxSessions, idleSeconds: Math.round(this.idleMs / 1000) });
      }
      const created: Entry = { abort: new AbortController(), busy: 0 };
      entry = created;
      this.entries.set(id, created);
      created.opening = this.create(id, key, init, created).catch((e: unknown) => {
        if (this.entries.get(id) === created) this.entries.delete(id);
        void created.proxy?.close();
        throw e;
      });
    }
    this.hold(entry);
    try {
      const session = entry.session ?? (await (entry.opening as Promise<BrowserSession>));
      session.policy = init.policy;
      return session;
    } catch (e) {
      this.release(key);
      throw e;
    }
  }

  /** The existing session of `key` held for one tool call (see `open`), or undefined. */
  acquire(key: SessionKey): BrowserSession | undefined {
    const entry = this.entries.get(sessionKeyOf(key));
    if (!entry?.session) return undefined;
    this.hold(entry);
    return entry.session;
  }

  /** Ends a call begun with `open`/`acquire`; the idle timer restarts when none is left. */
  release(key: SessionKey): void {
    const id = sessionKeyOf(key);
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.busy = Math.max(0, entry.busy - 1);
    if (entry.busy > 0) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void this.close(id), this.idleMs);
    entry.timer.unref?.();
  }

  /** The existing session of `key`, without holding it. */
  get(key: SessionKey): BrowserSession | undefined {
    return this.entries.get(sessionKeyOf(key))?.session;
  }

  /** Closes one session (its context, pages and timers). Unknown keys are a no-op. */
  async close(key: SessionKey | string): Promise<boolean> {
    const id = typeof key === 'string' ? key : sessionKeyOf(key);
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.entries.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    entry.unsubscribe?.();
    entry.abort.abort();
    const session = entry.session ?? (await entry.opening?.catch(() => undefined));
    await session?.context.close().catch(() => {});
    await entry.proxy?.close();
    return true;
  }

  /** Closes every session and the browser process (host shutdown). */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.keys()].map((id) => this.close(id)));
    const browser = this.browser;
    this.browser = undefined;
    if (browser) await (await browser.catch(() => undefined))?.close().catch(() => {});
    const refuser = this.refuser;
    this.refuser = undefined;
    if (refuser) {
      const { server } = await refuser;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** The shared browser (launched on first use; relaunched if it died). */
  async sharedBrowser(): Promise<Browser> {
    if (!this.browser) {
      const launching = this.launch();
      this.browser = launching;
      launching.then(
        (b) =>
          b.on('disconnected', () => {
            if (this.browser === launching) this.browser = undefined;
          }),
        () => {
          if (this.browser === launching) this.browser = undefined;
        },
      );
    }
    return this.browser;
  }

  private async launch(): Promise<Browser> {
    const found = this.deps.executable();
    if ('missing' in found) throw new FengYuError('browser_unavailable', { reason: found.missing });
    const { port } = await this.refusingProxy();
    const env = this.deps.env ?? browserEnv(this.deps.home);
    for (const d of [env.HOME, env.XDG_CONFIG_HOME, env.XDG_CACHE_HOME]) if (d) mkdirSync(d, { recursive: true });
    // loaded on first use: playwright-core is a large module, and most hosts never start a browser
    const { chromium } = await import('playwright-core');
    try {
      return await chromium.launch({
        executablePath: found.path,
        headless: true,
        args: [...CHROMIUM_ARGS, `--proxy-server=http://127.0.0.1:${port}`],
        env,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        timeout: 60_000,
      });
    } catch (e) {
      throw new FengYuError('browser_launch_failed', { path: found.path, reason: (e as Error).message.split('\n')[0] ?? String(e) }, undefined, { cause: e });
    }
  }

  /** A loopback TCP listener that drops every connection: Chromium's only "proxy". */
  private refusingProxy(): Promise<{ server: Server; port: number }> {
    if (!this.refuser) {
      this.refuser = new Promise((resolve, reject) => {
        const server = createServer((socket) => socket.destroy());
        server.on('error', reject);
        server.listen(0, '127.0.0.1', () => {
          server.unref();
          const addr = server.address();
          resolve({ server, port: typeof addr === 'object' && addr ? addr.port : 0 });
        });
      });
    }
    return this.refuser;
  }

  private async create(id: string, key: SessionKey, init: SessionInit, entry: Entry): Promise<BrowserSession> {
    const browser = await this.sharedBrowser();
    const record = (b: Blocked) => {
      const s = holder.session;
      if (!s) return;
      s.blockedSeq += 1;
      s.blocked.push({ ...b, seq: s.blockedSeq });
      if (s.blocked.length > MAX_BLOCKED) s.blocked.shift();
    };
    const holder: { session?: BrowserSession } = {};
    entry.proxy = await startPolicyProxy({
      policy: () => holder.session?.policy ?? init.policy,
      resolver: this.deps.resolver,
      ...(init.navigationGate ? { deniedHost: init.navigationGate } : {}),
      onBlocked: (url, reason, by) => record({ url, reason, navigation: false, by }),
    });
    const context = await browser.newContext({
      proxy: { server: `http://127.0.0.1:${entry.proxy.port}`, bypass: '<-loopback>' },
      acceptDownloads: false,
      serviceWorkers: 'block',
      viewport: { width: 1280, height: 800 },
      locale: 'en-US',
    });
    const dir = key.runId ? join(this.deps.home, 'runs', key.runId, 'browser') : join(this.deps.home, 'browser', 'sessions', id.replace(/[^A-Za-z0-9_-]/g, '_'));
    const session: BrowserSession = {
      key: id,
      owner: key.owner,
      ...(key.runId ? { runId: key.runId } : {}),
      context,
      pages: [],
      current: 0,
      policy: init.policy,
      dir,
      blocked: [],
      blockedSeq: 0,
      downloadSeq: 0,
      queue: Promise.resolve(),
      downloads: [],
    };
    holder.session = session;
    const guard = createRequestGuard({
      policy: () => session.policy,
      onBlocked: record,
      ...(init.navigationGate ? { navigationGate: init.navigationGate } : {}),
    });
    await context.route('**/*', guard);
    // WebSockets never pass the address policy: refused outright.
    await context.routeWebSocket('**/*', (ws) => ws.close({ code: 1008, reason: 'WebSockets are not available to the browser tools' }));
    context.on('page', (page) => this.track(session, page));
    if (key.runId && this.deps.onRunEnd) entry.unsubscribe = this.deps.onRunEnd(key.runId, () => void this.close(id));
    if (this.entries.get(id) !== entry) {
      // closed while opening
      await context.close().catch(() => {});
      throw new FengYuError('browser_action_failed', { action: 'open', reason: 'the session was closed' });
    }
    entry.session = session;
    return session;
  }

  /** Keeps `pages` in step with the context: popups join, closed tabs leave. */
  private track(session: BrowserSession, page: Page): void {
    if (!session.pages.includes(page)) session.pages.push(page);
    page.on('download', (d) => {
      session.downloadSeq += 1;
      session.downloads.push({ url: d.url(), suggestedFilename: d.suggestedFilename(), seq: session.downloadSeq });
      if (session.downloads.length > MAX_BLOCKED) session.downloads.shift();
      void d.cancel().catch(() => {});
    });
    page.on('close', () => {
      const i = session.pages.indexOf(page);
      if (i < 0) return;
      session.pages.splice(i, 1);
      if (session.current >= session.pages.length) session.current = Math.max(0, session.pages.length - 1);
      else if (i < session.current) session.current -= 1;
    });
  }

  private hold(entry: Entry): void {
    entry.busy += 1;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
  }
}
