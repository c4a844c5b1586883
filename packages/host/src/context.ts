import type { FastifyInstance } from 'fastify';
import type { AgentService } from './agent/agent.service';
import type { InboxService } from './inbox/inbox.service';
import type { McpDomain } from './mcp/mcp.domain';
import type { ModelsDomain } from './models/models.domain';
import type { PermissionsDomain } from './permissions/permissions.domain';
import type { PermissionGuard } from './permissions/types';
import type { PluginsDomain } from './plugins/plugins.domain';
import type { SandboxPosture } from './plugins/posture';
import type { CoreServices } from './services';
import type { TaskSubmitter } from './tasks/task-submitter';
import type { TasksDomain } from './tasks/tasks.domain';
import type { WorkflowsDomain } from './workflows/workflows.domain';
import type { ErrorWorkflows } from './workflows/error-dispatch';

export type { Clock } from './clock';
export type { SandboxPosture } from './plugins/posture';

/**
 * Everything the host is made of, built once and typed by the composition root (`compose.ts`).
 * Route registrars (`domains.ts`) receive it; services never import it (they take the parts
 * they use as constructor or factory arguments).
 */
export interface HostContext extends CoreServices {
  /**
   * The one permission guard. Every caller reads it through the context at call time, so a test
   * host may swap it; nothing in the host assigns it after assembly.
   */
  guard: PermissionGuard;
  /** Plugin isolation posture; read at call time like `guard` (tests may swap it). */
  posture: () => SandboxPosture;
  readonly agent: AgentService;
  readonly permissions: PermissionsDomain;
  readonly plugins: PluginsDomain;
  readonly mcp: McpDomain;
  readonly workflows: WorkflowsDomain;
  readonly models: ModelsDomain;
  /** Background tasks (queue and fair scheduler), when the tasks domain is assembled. */
  readonly tasks?: TaskSubmitter;
  /** The tasks domain's handles (executor, metrics) for its routes. */
  readonly tasksDomain?: TasksDomain;
  /** Every pending gate of the owners' runs, its answers and its stream. */
  readonly inbox: InboxService;
  /** Failed runs' error workflows: the outbox (what the run detail shows) and its dispatcher. */
  readonly errorWorkflows?: ErrorWorkflows;
}

/** A domain's HTTP entry point, called once by `createHost` in the order of `domains.ts`. */
export type DomainRegistrar = (ctx: HostContext, app: FastifyInstance) => Promise<void> | void;
