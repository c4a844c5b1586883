import { FengYuError, type InboxItem, type InboxPage } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { AgentService } from '../agent/agent.service';
import { classifyApproveBody } from '../agent/approve-body';
import { isoTime, type Clock } from '../clock';
import type { InboxChange, InboxRecorder } from './gate-recorder';
import { type InboxRepository, inboxCursor, itemOf } from './inbox.repository';
import type { InboxNotifier } from './notifier';

/**
 * The owner's inbox: every pending gate of the owner's runs, oldest first; the one answer path
 * (the same as the run page's: the run's approve); expiry of items nobody answered in time.
 */

/** Page size of `GET /api/inbox`. */
export const INBOX_PAGE = 50;
/** The expiry timer looks again at least this often (a clock moved by a test or by the system). */
export const EXPIRY_RECHECK_MS = 60_000;

export interface InboxServiceDeps {
  repo: InboxRepository;
  recorder: InboxRecorder;
  agent: AgentService;
  clock: Clock;
  logger: Logger;
  /** E-mail per new item (when the owner's settings ask for it). */
  notifier?: InboxNotifier;
  /** Told the UI's address once the host listens (for the e-mail's link). */
  listening?: (url: string) => void;
}

export class InboxService {
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** How to end each open stream when the host stops. */
  private readonly streams = new Set<() => void>();
  private sweeping?: Promise<number>;
  /** E-mails being sent (waited for at close, and by tests). */
  readonly sending = new Set<Promise<boolean>>();

  constructor(private readonly deps: InboxServiceDeps) {
    deps.recorder.on((change) => {
      if (change.kind !== 'added') return;
      if (change.item.expiresAt) this.schedule();
      const notifier = deps.notifier;
      if (notifier) {
        const sent = notifier.added(change.owner, change.item);
        this.sending.add(sent);
        void sent.finally(() => this.sending.delete(sent));
      }
    });
  }

  /** The host listens at `url` (the UI's address, without the token). */
  listeningAt(url: string): void {
    this.deps.listening?.(url);
  }

  /**
   * Listens to the owner's changes (the stream). `ended` is called once when the host stops, so a
   * stream open in a browser never holds the stop waiting for its connection.
   */
  subscribe(owner: string, listener: (change: InboxChange) => void, ended?: () => void): () => void {
    const off = this.deps.recorder.on((change) => {
      if (change.owner === owner) listener(change);
    });
    if (ended) this.streams.add(ended);
    return () => {
      off();
      if (ended) this.streams.delete(ended);
    };
  }

  async list(owner: string, cursor?: string): Promise<InboxPage> {
    let after: { createdAt: string; id: string } | undefined;
    if (cursor !== undefined) {
      after = inboxCursor.decode(cursor);
      if (!after) throw new FengYuError('inbox_cursor_invalid');
    }
    const rows = await this.deps.repo.pending(owner, INBOX_PAGE + 1, after);
    const items = rows.slice(0, INBOX_PAGE).map(itemOf);
    const last = rows.length > INBOX_PAGE ? items[items.length - 1] : undefined;
    return { items, ...(last ? { nextCursor: inboxCursor.encode(last) } : {}) };
  }

  count(owner: string): Promise<number> {
    return this.deps.repo.countPending(owner);
  }

  /** The owner's pending item (404 for an unknown or another owner's, 409 for a settled one). */
  private async pendingItem(owner: string, id: string): Promise<InboxItem> {
    const row = await this.deps.repo.get(id);
    if (!row || row.owner !== owner) throw new FengYuError('inbox_item_not_found', { id });
    if (row.state !== 'pending') throw new FengYuError('inbox_item_settled', { id, outcome: row.state });
    return itemOf(row);
  }

  /**
   * Answers an item with the approve bodies of a run's approve route, or an input with `{values}`
   * (validated before anything changes). The gate
   * must still be the run's open one; otherwise the item is settled (409).
   */
  async answer(owner: string, id: string, body: unknown): Promise<{ id: string; runId: string; outcome: 'answered' }> {
    const item = await this.pendingItem(owner, id);
    if (item.kind !== 'input') classifyApproveBody(body);
    if ((await this.deps.agent.pendingGateId(item.runId)) !== id) throw new FengYuError('inbox_item_settled', { id, outcome: 'answered' });
    // an input takes {values} (checked against its form), an approval the approve bodies
    if (item.kind === 'input') await this.deps.agent.input(owner, item.runId, body);
    else await this.deps.agent.approve(owner, item.runId, body);
    return { id, runId: item.runId, outcome: 'answered' };
  }

  /**
   * At start: items whose run is not live in this process cannot be answered any more (their run
   * was interrupted by the stop): they are cancelled. Then the expiry timer starts.
   */
  async start(): Promise<void> {
    const now = isoTime(this.deps.clock.now());
    for (const row of await this.deps.repo.allPending()) {
      // on a shared database another host may run it: only items of runs that ended go
      if (this.deps.agent.isActive(row.run_id) || !(await this.deps.repo.runEnded(row.run_id))) continue;
      if (await this.deps.repo.settle(row.id, 'cancelled', now)) this.deps.recorder.removed(row.owner, row.id, 'cancelled');
    }
    this.schedule();
  }

  /** Expires every pending item whose time has come; returns how many. */
  sweepExpired(): Promise<number> {
    this.sweeping ??= this.sweep().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private async sweep(): Promise<number> {
    const now = this.deps.clock.now();
    let n = 0;
    for (const row of await this.deps.repo.expiring(100)) {
      if (!row.expires_at || Date.parse(row.expires_at) > now) break;
      if (await this.deps.agent.expireGate(row.run_id, row.id)) n += 1;
      else if (await this.deps.repo.settle(row.id, 'expired', isoTime(now))) {
        // its run is not live here (it ended meanwhile): the item goes all the same
        this.deps.recorder.removed(row.owner, row.id, 'expired');
        n += 1;
      }
    }
    return n;
  }

  /** Arms the timer for the soonest expiry (looking again at least every minute). */
  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    void this.deps.repo.expiring(1).then(
      (rows) => {
        if (this.closed) return;
        const at = rows[0]?.expires_at ? Date.parse(rows[0].expires_at) : undefined;
        const delay = at === undefined ? EXPIRY_RECHECK_MS : Math.max(0, Math.min(EXPIRY_RECHECK_MS, at - this.deps.clock.now()));
        clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          void this.sweepExpired()
            .catch((err) => this.deps.logger.warn({ err }, 'inbox expiry failed'))
            .finally(() => this.schedule());
        }, delay);
        this.timer.unref();
      },
      (err) => this.deps.logger.warn({ err }, 'inbox expiry lookup failed'),
    );
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    const open = [...this.streams];
    this.streams.clear();
    for (const end of open) end();
  }
}
