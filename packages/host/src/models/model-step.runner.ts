import type { SecretValue } from '@fengyu/protocol';
import type { ModelChoiceRequest, ModelStepRequest, ModelStepRunner } from '../agent/contracts';
import type { BackendResolver } from './backend-resolver';
import { fileRefsPrompt, injectFileArgument } from './file-routing';
import { parseJsonAnswer } from './plan-prompt';
import { callToolGuarded } from './tool-call';
import { DEFAULT_MAX_ROUNDS, runToolLoop } from './tool-loop';

/**
 * Runs a model step (a plan step with an `instruction` and no `tool`): a bounded tool loop over
 * the run's catalog snapshot, every call through the permission guard with caller `model`; an
 * `ask` decision opens the run's step gate. The result is the model's final text, or the parsed
 * value when the instruction asks for JSON and the answer is JSON.
 */

export interface ModelStepDeps {
  resolver: BackendResolver;
  maxRounds?: number;
  /** The owner's secret values, hidden in tool answers before the model sees them. */
  redactions?: (owner: string) => readonly SecretValue[];
}

const SYSTEM = [
  'You are carrying out one step of an approved FengYu workflow.',
  'Use the available tools when they help; a denied or failed call comes back as an error result: do not repeat it, find another way or explain what is missing.',
  'When done, answer with the step\'s result only (no preamble). If the instruction asks for JSON, answer with JSON only.',
].join('\n');

export class ModelStepExecutor implements ModelStepRunner {
  constructor(private readonly deps: ModelStepDeps) {}

  choose(req: ModelChoiceRequest): Promise<string> {
    return chooseCase(this.deps.resolver, req);
  }

  async run(req: ModelStepRequest): Promise<unknown> {
    const backend = await this.deps.resolver.resolve(req.owner, req.backend, req.model);
    const files = fileRefsPrompt(req.grants);
    const tools = req.catalog.tools.filter((t) => t.available);
    const result = await runToolLoop({
      model: backend.model,
      backendId: backend.id,
      system: files ? `${SYSTEM}\n\n${files}` : SYSTEM,
      messages: [{ role: 'user', content: req.instruction }],
      tools,
      maxRounds: this.deps.maxRounds ?? DEFAULT_MAX_ROUNDS,
      signal: req.signal,
      call: (tool, args, callId) =>
        callToolGuarded(
          {
            owner: req.owner,
            caller: 'model',
            permissionMode: req.permissionMode,
            guard: req.guard,
            grants: req.grants,
            signal: req.signal,
            runId: req.runId,
            stepId: req.step.id,
            emit: req.emit,
            redactions: this.deps.redactions?.(req.owner) ?? [],
            askApproval: (reason, detail) => req.askApproval(reason, { tool: detail.tool, arguments: detail.arguments, effect: detail.effect }),
          },
          tool,
          injectFileArgument(tool, args, req.grants),
          callId,
        ),
    });
    return stepResult(req.instruction, result.finalText);
  }
}

const CHOOSE_SYSTEM = [
  'You decide which branch one step of an approved FengYu workflow takes.',
  'Read the instruction and the cases, pick exactly one case name (or "else" when no case fits).',
  'Answer with JSON only: {"case": "<name>"}.',
].join('\n');

/** A model condition: one round, no tools; the answer is the model's text (the runner reads the case from it). */
export async function chooseCase(resolver: BackendResolver, req: ModelChoiceRequest): Promise<string> {
  const backend = await resolver.resolve(req.owner, req.backend, req.model);
  const cases = req.cases.map((c) => `- ${c.name}: ${c.description}`).join('\n');
  const result = await runToolLoop({
    model: backend.model,
    backendId: backend.id,
    system: CHOOSE_SYSTEM,
    messages: [{ role: 'user', content: `${req.instruction}\n\nCases:\n${cases}\n- else: none of the cases above` }],
    tools: [],
    maxRounds: 1,
    signal: req.signal,
    call: async () => ({ success: false, error: 'no tools are offered to a condition' }),
  });
  return result.finalText;
}

/** The step's value: parsed JSON when the instruction asks for JSON and the answer parses; else the text. */
export function stepResult(instruction: string, text: string): unknown {
  const trimmed = text.trim();
  if (/\bjson\b/i.test(instruction)) {
    const parsed = parseJsonAnswer(trimmed);
    if (parsed.ok) return parsed.value;
  }
  return trimmed;
}
