import type { InboxItem } from '@fengyu/protocol';
import type { Logger } from 'pino';
import { z } from 'zod';

/**
 * E-mail for new inbox items: with `notifications.email {accountId, to}` in the owner's settings,
 * each new item sends one plain message through the e-mail plugin (`email_notify`): the item's
 * title, its workflow, how its run was started, its expiry and a link to the Inbox page — never
 * the token. A failure is logged; it never touches the run.
 */

export const EMAIL_PLUGIN_ID = 'fan.summer.email';

export const NotificationsSchema = z
  .object({
    email: z
      .object({ accountId: z.string().min(1).max(200), to: z.string().email().max(320) })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();
export type Notifications = z.infer<typeof NotificationsSchema>;

export interface NotifierDeps {
  /** The owner's settings document (its `notifications` and `locale`). */
  settings: (owner: string) => Promise<Record<string, unknown>>;
  callMethod: (owner: string, pluginId: string, method: string, params: Record<string, unknown>) => Promise<unknown>;
  /** The UI's address once the host listens (no token in it). */
  uiUrl: () => string | undefined;
  logger: Logger;
}

const TEXT = {
  en: {
    kinds: { plan_approval: 'Plan review', step_approval: 'Step approval', input: 'Input' },
    triggers: { manual: 'by hand', task: 'a background task', schedule: 'a schedule', webhook: 'a webhook', tool: 'a workflow tool', chat: 'a chat', mcp: 'MCP' },
    subject: (kind: string, title: string) => `[FengYu] ${kind}: ${title}`,
    lines: (i: InboxItem, kind: string, trigger: string, link: string) => [
      `A run waits for you (${kind}): ${i.title}`,
      `Workflow: ${i.workflowName ?? i.workflowId ?? '-'}`,
      `Started by: ${trigger}`,
      `Run: ${i.runId}`,
      ...(i.expiresAt ? [`Expires: ${i.expiresAt}`] : []),
      '',
      `Answer it in the inbox: ${link}`,
    ],
  },
  'zh-CN': {
    kinds: { plan_approval: '计划审查', step_approval: '步骤审批', input: '输入' },
    triggers: { manual: '手动', task: '后台任务', schedule: '计划', webhook: 'Webhook', tool: '工作流工具', chat: '聊天', mcp: 'MCP' },
    subject: (kind: string, title: string) => `[FengYu] ${kind}：${title}`,
    lines: (i: InboxItem, kind: string, trigger: string, link: string) => [
      `有一个运行在等待你处理（${kind}）：${i.title}`,
      `工作流：${i.workflowName ?? i.workflowId ?? '-'}`,
      `启动方式：${trigger}`,
      `运行：${i.runId}`,
      ...(i.expiresAt ? [`过期时间：${i.expiresAt}`] : []),
      '',
      `请在收件箱中处理：${link}`,
    ],
  },
} as const;

/** The message of one item (pure). */
export function notificationMessage(item: InboxItem, locale: string, uiUrl: string | undefined): { subject: string; body: string } {
  const t = locale === 'zh-CN' ? TEXT['zh-CN'] : TEXT.en;
  const kind = t.kinds[item.kind];
  const link = `${uiUrl ?? 'http://127.0.0.1:7878'}/inbox`;
  return { subject: t.subject(kind, item.title), body: t.lines(item, kind, t.triggers[item.trigger], link).join('\n') };
}

export class InboxNotifier {
  constructor(private readonly deps: NotifierDeps) {}

  /** Sends the item's e-mail when the owner asked for one; resolves true when one was sent. */
  async added(owner: string, item: InboxItem): Promise<boolean> {
    try {
      const doc = await this.deps.settings(owner);
      const email = (doc.notifications as Notifications | undefined)?.email;
      if (!email) return false;
      const { subject, body } = notificationMessage(item, String(doc.locale ?? 'en'), this.deps.uiUrl());
      const r = (await this.deps.callMethod(owner, EMAIL_PLUGIN_ID, 'email_notify', { accountId: email.accountId, to: [email.to], subject, body })) as { success?: boolean; error?: string };
      if (r?.success !== true) throw new Error(r?.error ?? 'the e-mail plugin reported failure');
      return true;
    } catch (err) {
      this.deps.logger.warn({ err, itemId: item.id, runId: item.runId }, 'inbox e-mail notification failed');
      return false;
    }
  }
}
