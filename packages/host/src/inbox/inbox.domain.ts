import { errorSpecOf, registerErrors } from '@fengyu/protocol';
import type { AgentService } from '../agent/agent.service';
import type { CoreServices } from '../services';
import { InboxRecorder } from './gate-recorder';
import { InboxRepository } from './inbox.repository';
import { InboxService } from './inbox.service';
import { InboxNotifier, NotificationsSchema } from './notifier';

/**
 * The inbox domain. Its recorder is made before the agent service (every run's gates are recorded
 * through it); the service, which answers through the agent, after.
 */

registerErrors({
  inbox_item_not_found: errorSpecOf(404),
  inbox_item_settled: errorSpecOf(409),
  inbox_cursor_invalid: errorSpecOf(400),
  inbox_notifications_invalid: errorSpecOf(400),
});

export function createInboxRecorder(core: Pick<CoreServices, 'db' | 'clock' | 'logger'>): { repo: InboxRepository; recorder: InboxRecorder } {
  const repo = new InboxRepository(core.db);
  return { repo, recorder: new InboxRecorder(repo, core.clock, core.logger.child({ component: 'inbox' })) };
}

export function createInboxDomain(
  core: Pick<CoreServices, 'clock' | 'logger' | 'onClose' | 'settings'>,
  made: { repo: InboxRepository; recorder: InboxRecorder },
  agent: AgentService,
  callMethod: (owner: string, pluginId: string, method: string, params: Record<string, unknown>) => Promise<unknown>,
): InboxService {
  const logger = core.logger.child({ component: 'inbox' });
  core.settings.registerSection('notifications', { schema: NotificationsSchema, defaultValue: {} });
  let uiUrl: string | undefined;
  const notifier = new InboxNotifier({ settings: (owner) => core.settings.get(owner), callMethod, uiUrl: () => uiUrl, logger });
  const service = new InboxService({ ...made, agent, clock: core.clock, logger, notifier, listening: (url) => (uiUrl = url) });
  core.onClose(() => service.close());
  return service;
}
