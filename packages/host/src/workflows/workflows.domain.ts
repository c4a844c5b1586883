import type { AgentService } from '../agent/agent.service';
import type { CoreServices } from '../services';
import { TEMPLATES_DIR, TemplateStore } from './templates';
import { WorkflowRepository } from './workflow.repository';
import { WorkflowService } from './workflow.service';
import { BaseCatalog, WorkflowToolSource } from './workflow.tools';
import { WorkflowRunner } from './workflow-run';
import { registerWorkflowErrors } from './workflows.errors';

/**
 * The workflows domain's services: definitions, revisions, publication, templates, the
 * `run_workflow_<id>` tools of published workflows, and the runner other domains start
 * workflow runs with.
 */

/** Handles of the domain that other domains use (schedules, webhooks, tasks). */
export interface WorkflowsDomain {
  /** Definitions and publication; `service.onDelete(hook)` runs inside a workflow's deletion. */
  service: WorkflowService;
  tools: WorkflowToolSource;
  templates: TemplateStore;
  /** Catalog snapshots without workflow tools. */
  base: BaseCatalog;
  /** Starts runs of a draft or a version (schedules and webhooks: `version: "published"`). */
  runner: WorkflowRunner;
}

export function createWorkflowsDomain(deps: Pick<CoreServices, 'db' | 'catalog' | 'clock' | 'logger' | 'runs'> & Partial<Pick<CoreServices, 'vault'>> & { agent: AgentService }, templateDirs: string[] = [TEMPLATES_DIR]): WorkflowsDomain {
  registerWorkflowErrors();
  const repo = new WorkflowRepository(deps.db);
  const base = new BaseCatalog(deps.catalog);
  const templates = new TemplateStore(deps.logger.child({ component: 'workflow-templates' }));
  for (const dir of templateDirs) templates.loadDir(dir);
  const vault = deps.vault;
  const service = new WorkflowService({ repo, clock: deps.clock, templates, baseCatalog: (o) => base.snapshot(o), ...(vault ? { secretNames: (o: string) => vault.view(o).names } : {}) });
  const tools = new WorkflowToolSource({ repo, base, agent: deps.agent, runs: deps.runs });
  deps.catalog.register(tools);
  const runner = new WorkflowRunner({ agent: deps.agent, baseCatalog: (o) => base.snapshot(o), service });
  return { service, tools, templates, base, runner };
}
