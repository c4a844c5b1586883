import type { InputVault } from '../agent/secret-inputs';
import type { JsonSchema, PermissionMode } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { CrashPoint } from '../config/crash-points';
import type { Clock, SandboxPosture } from '../context';
import type { TaskSubmitter } from '../tasks/task-submitter';
import type { WebhookRepository } from './webhook.repository';
import type { DeliveryBinder } from './webhook-rules';

/** The active published version of an owner's workflow (throws workflow_not_found / workflow_not_published). */
export interface ActiveWorkflow {
  version: number;
  inputSchema: JsonSchema;
  /** The delivery checks of `inputSchema`, made once per version (made per delivery when absent). */
  binder?: DeliveryBinder;
}

export interface WebhookWorkflows {
  active(owner: string, workflowId: string): Promise<ActiveWorkflow>;
  /** Throws workflow_not_found for an unknown id or another owner's workflow. */
  exists(owner: string, workflowId: string): Promise<void>;
}

/** Refuses unattended runs under `ask` of a workflow with a non-read step no allow rule covers. */
export type UnattendedCheck = (req: { owner: string; workflowId: string; permissionMode: PermissionMode }) => Promise<void>;

export interface WebhookServiceDeps {
  repo: WebhookRepository;
  clock: Clock;
  tasks: TaskSubmitter;
  workflows: WebhookWorkflows;
  posture: () => SandboxPosture;
  logger: Logger;
  unattended?: UnattendedCheck;
  /** Keeps the secret inputs' defaults (`trigger:<id>/input/<name>`; docs/secrets.md); without it none is kept. */
  vault?: InputVault;
  /**
   * Crash tests (docs/reliability.md): `webhook-claim` right after a claim is written (on SQLite's group
   * path, once the claim, audit and task rows are written, before they commit; elsewhere once the
   * claim committed, before the task is submitted); `webhook-commit` once the delivery is
   * committed, before its task starts and the sender is answered.
   */
  crashPoint?: CrashPoint;
  /** How often expired event-id claims are pruned, and how many per statement (tests shorten them). */
  claimPrune?: { everyMs: number; batch: number };
}

export interface DeliveryAnswer {
  taskId: string;
  deliveryId: string;
  duplicate: boolean;
}

export interface CreateTriggerBody {
  defaults?: unknown;
  permissionMode: PermissionMode;
  name?: string;
}
