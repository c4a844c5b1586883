import type { AgentPlan } from '@fengyu/protocol';
import type { ModelMessage } from 'ai';
import type { PlanRequest, Planner } from '../agent/contracts';
import type { BackendResolver } from './backend-resolver';
import { streamModelText } from './model-text';
import { parseJsonAnswer, planSystemPrompt, repairPrompt } from './plan-prompt';

/**
 * The model planner (seam `Planner`): drafts an AgentPlan from a goal with no tools passed, streams
 * its text through `onToken`, and parses the JSON answer. Validation and the single repair round
 * are driven by the agent runner; an unparseable answer is returned as the raw text, so the
 * validator reports it and `repair` explains the JSON error to the model.
 */

export interface PlannerDeps {
  resolver: BackendResolver;
  /** Memories relevant to the goal (empty when memory is off for the owner). */
  memories: (owner: string, goal: string) => Promise<string[]>;
  /** The owner's secret names, listed in the prompt so a drafted plan can use one by name. */
  secretNames?: (owner: string) => readonly string[];
}

export class ModelPlanner implements Planner {
  constructor(private readonly deps: PlannerDeps) {}

  async available(owner: string, backend?: string): Promise<boolean> {
    return this.availableNow(owner, backend) ?? (await this.deps.resolver.pick(owner, backend)) !== undefined;
  }

  availableNow(owner: string, backend?: string): boolean | undefined {
    return this.deps.resolver.pickableNow(owner, backend);
  }

  async draft(req: PlanRequest): Promise<unknown> {
    const { system, messages } = await this.conversation(req);
    return this.ask(req, system, messages);
  }

  async repair(req: PlanRequest, draft: unknown, problems: string[]): Promise<unknown> {
    const { system, messages } = await this.conversation(req);
    const draftText = typeof draft === 'string' ? draft : JSON.stringify(draft);
    const all = [...problems];
    if (typeof draft === 'string') {
      const parsed = parseJsonAnswer(draft);
      all.unshift(`the answer is not a JSON object${parsed.ok ? '' : `: ${parsed.reason}`}`);
    }
    messages.push({ role: 'assistant', content: draftText }, { role: 'user', content: repairPrompt(all) });
    return this.ask(req, system, messages);
  }

  async summarize(req: {
    owner: string;
    goal?: string;
    plan: AgentPlan;
    results: Record<string, unknown>;
    backend?: string;
    model?: string;
    signal: AbortSignal;
  }): Promise<string | undefined> {
    if (!(await this.available(req.owner, req.backend))) return undefined;
    const backend = await this.deps.resolver.resolve(req.owner, req.backend, req.model);
    const results = clip(JSON.stringify(req.results), 12_000);
    const text = await streamModelText({
      model: backend.model,
      backendId: backend.id,
      system: 'You summarize finished FengYu workflow runs for the user in two or three plain sentences: what was done and the key results. No preamble.',
      messages: [
        {
          role: 'user',
          content: `Goal: ${req.goal ?? req.plan.goal ?? '(none)'}\nSteps: ${req.plan.steps.map((s) => s.title ?? s.id).join('; ')}\nResults (JSON): ${results}`,
        },
      ],
      signal: req.signal,
      // the summary is optional: a failing backend must not hold the complete frame back
      maxRetries: 0,
    });
    return text.trim() || undefined;
  }

  private async conversation(req: PlanRequest): Promise<{ system: string; messages: ModelMessage[] }> {
    const memories = await this.deps.memories(req.owner, req.goal);
    const system = planSystemPrompt({ goal: req.goal, catalog: req.catalog.entries(), inputs: req.inputs, memories, secretNames: this.deps.secretNames?.(req.owner) ?? [] });
    return { system, messages: [{ role: 'user', content: `Goal: ${req.goal}` }] };
  }

  private async ask(req: PlanRequest, system: string, messages: ModelMessage[]): Promise<unknown> {
    const backend = await this.deps.resolver.resolve(req.owner, req.backend, req.model);
    const text = await streamModelText({ model: backend.model, backendId: backend.id, system, messages, signal: req.signal, onText: req.onToken });
    const parsed = parseJsonAnswer(text);
    return parsed.ok ? parsed.value : text;
  }
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(truncated)`;
}
