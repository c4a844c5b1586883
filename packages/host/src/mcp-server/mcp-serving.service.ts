import { FengYuError, isTerminal, type JsonSchema, type Locale, localize, mcpToolNames, type WorkflowMcp } from '@fengyu/protocol';
import type { AgentService } from '../agent/agent.service';
import type { RunRepository } from '../agent/run.repository';
import { contentOf, type WorkflowContent } from '../workflows/workflow.repository';
import type { WorkflowService } from '../workflows/workflow.service';
import { toolSchema } from '../workflows/workflow.tools';
import type { WorkflowRunner } from '../workflows/workflow-run';
import { problemsText } from '../workflows/workflow-run';

/**
 * The owner's published workflows as MCP tools: those whose definition has `mcp.enabled`, each
 * named `wf_<slug>` with its description and input schema. A call runs the published version
 * under the definition's `mcp.permissionMode` (gates wait for a person, as in any unattended
 * run) and answers with the run's result, or `isError` with its error; a run still going after
 * the call's patience answers `isError` with the run id and where to approve it.
 */

export interface ServedWorkflow {
  /** The tool name clients call (`wf_<slug>`). */
  name: string;
  workflowId: string;
  version: number;
  content: WorkflowContent;
  mcp: WorkflowMcp;
}

export interface McpServingDeps {
  workflows: WorkflowService;
  runner: WorkflowRunner;
  agent: AgentService;
  runs: RunRepository;
  /** How long a call waits for its run before answering with the run id. */
  patienceMs: number;
  /** The host's UI address (no token), for the pointer to the inbox. */
  uiUrl: () => string;
}

/** What a tool call answers (the MCP `CallToolResult` shape). */
export interface ServedResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A tool call's arguments did not fit the workflow's inputs (an MCP invalid-params error). */
export class InvalidArguments extends Error {}

export class McpServing {
  constructor(private readonly deps: McpServingDeps) {}

  /** The owner's served workflows, in a stable order (by workflow id). */
  async served(owner: string): Promise<ServedWorkflow[]> {
    const defs = (await this.deps.workflows.list(owner)).filter((d) => d.mcp.enabled && d.publishedVersion !== null).sort((a, b) => (a.id < b.id ? -1 : 1));
    const names = mcpToolNames(defs);
    return Promise.all(
      defs.map(async (d) => {
        const v = await this.deps.workflows.versionRow(owner, d.id, d.publishedVersion as number);
        return { name: names.get(d.id) as string, workflowId: d.id, version: v.version, content: contentOf(v), mcp: d.mcp };
      }),
    );
  }

  /** The MCP tool list of the owner. */
  async list(owner: string): Promise<Array<{ name: string; title: string; description: string; inputSchema: JsonSchema }>> {
    return (await this.served(owner)).map((s) => ({
      name: s.name,
      title: s.content.name,
      description: s.content.description || `Run the FengYu workflow "${s.content.name}" (version ${s.version}).`,
      inputSchema: { type: 'object', ...toolSchema(s.content.inputSchema) },
    }));
  }

  /** Runs the workflow behind tool `name`; undefined when the owner serves no such tool. */
  async call(owner: string, name: string, args: Record<string, unknown>, locale: Locale): Promise<ServedResult | undefined> {
    const target = (await this.served(owner)).find((s) => s.name === name);
    if (!target) return undefined;
    let runId: string;
    try {
      runId = await this.deps.runner.run(owner, target.workflowId, {
        version: target.version,
        inputs: args,
        config: { permissionMode: target.mcp.permissionMode, planApproval: false },
        origin: 'mcp',
      });
    } catch (err) {
      if (err instanceof FengYuError && err.code === 'workflow_inputs_invalid') throw new InvalidArguments(problemsText(err));
      throw err;
    }
    const ended = await this.settle(runId);
    if (ended === undefined) {
      const ui = this.deps.uiUrl();
      const text = localize('mcp_workflow_waiting', { runId, seconds: Math.round(this.deps.patienceMs / 1000), inbox: `${ui}/inbox`, run: `${ui}/runs` }, locale);
      return { content: [{ type: 'text', text }], structuredContent: { runId, status: 'running' }, isError: true };
    }
    const row = await this.deps.runs.get(runId);
    if (ended === 'completed') {
      const result: unknown = row?.result ? JSON.parse(row.result) : null;
      const structured = result && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : { result };
      return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: structured };
    }
    const text = localize('mcp_workflow_failed', { runId, status: isTerminal(ended) ? ended : 'failed', reason: row?.error ?? ended }, locale);
    return { content: [{ type: 'text', text }], structuredContent: { runId, status: ended }, isError: true };
  }

  /** The run's end status, or undefined when it is still going after the patience. */
  private async settle(runId: string) {
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.deps.patienceMs);
    });
    try {
      return await Promise.race([this.deps.agent.waitForEnd(runId), patience]);
    } finally {
      clearTimeout(timer);
    }
  }
}
