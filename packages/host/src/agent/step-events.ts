import type { PlanStep } from '@fengyu/protocol';
import { redactSecrets } from '@fengyu/protocol';
import { type NewEvent, presetJson } from '../events/event-log';
import { resultJsonOf } from '../tools/result-json';
import type { Tool } from '../tools/tool';

/**
 * The events of a step's call and end as the step runner writes them, each made with its payload
 * text when the result's JSON is at hand (made once per result), and the bounds on results.
 */

/** Results above this size fail the step instead of bloating the log (bounded outputs). */
export const MAX_RESULT_BYTES = 4 * 1024 * 1024;

/**
 * How a call ended. `json`: the result as JSON text, when already made (it is made once per
 * result). A failure may keep what the tool answered (`kept`: a failed command's whole result),
 * stored in the step's execution though the step failed; `code` is the error's stable code.
 */
export type Outcome = { ok: true; result: unknown; json?: string } | { ok: false; error: string; code?: string; kept?: unknown };

/**
 * The events carrying a step's result, with the result as their last member. When the result's JSON
 * text was already made (once per result), the event's payload text (the event without `type`) is
 * made from it and the JSON of the members before it, instead of serializing the result again.
 * Each is one object literal (one shape), its members before the result written out twice.
 */
/** Where a body step's events say it runs (none for a top-level step). */
export type Frame = { iteration: number; parentStepId: string } | undefined;

export function toolResult(stepId: string, name: string, outcome: Outcome & { ok: true }, frame: Frame): NewEvent {
  if (frame) {
    const event: NewEvent = { type: 'tool', phase: 'result', stepId, name, iteration: frame.iteration, parentStepId: frame.parentStepId, result: outcome.result };
    if (outcome.json !== undefined) presetJson.set(event, withResultText(JSON.stringify({ phase: 'result', stepId, name, iteration: frame.iteration, parentStepId: frame.parentStepId }), outcome.json));
    return event;
  }
  const event: NewEvent = { type: 'tool', phase: 'result', stepId, name, result: outcome.result };
  if (outcome.json !== undefined) presetJson.set(event, withResultText(JSON.stringify({ phase: 'result', stepId, name }), outcome.json));
  return event;
}

export function stepComplete(stepId: string, index: number, attempts: number, durationMs: number, outcome: Outcome & { ok: true }, frame: Frame): NewEvent {
  if (frame) {
    const { iteration, parentStepId } = frame;
    const event: NewEvent = { type: 'step_complete', stepId, index, status: 'done', attempts, durationMs, iteration, parentStepId, result: outcome.result };
    if (outcome.json !== undefined) presetJson.set(event, withResultText(JSON.stringify({ stepId, index, status: 'done', attempts, durationMs, iteration, parentStepId }), outcome.json));
    return event;
  }
  const event: NewEvent = { type: 'step_complete', stepId, index, status: 'done', attempts, durationMs, result: outcome.result };
  if (outcome.json !== undefined) presetJson.set(event, withResultText(JSON.stringify({ stepId, index, status: 'done', attempts, durationMs }), outcome.json));
  return event;
}

/** The JSON text of an object's members (`head`, the JSON of the object without them) followed by `"result":` and the result's text. */
export function withResultText(head: string, json: string): string {
  return `${head.length > 2 ? `${head.slice(0, -1)},` : '{'}"result":${json}}`;
}

/** The whole result a failed call kept (`details.result` of its error), when it has one. */
export function keptResult(err: { details?: unknown }): unknown {
  const d = err.details;
  return d && typeof d === 'object' && !Array.isArray(d) && 'result' in d ? (d as { result: unknown }).result : undefined;
}

export function keptField(outcome: Outcome & { ok: false }): { result?: unknown } {
  return outcome.kept === undefined ? {} : { result: outcome.kept };
}

/** The kept result of a failure as the execution stores it (null without one, or one too large to keep). */
export function keptJson(outcome: Outcome & { ok: false }): string | null {
  if (outcome.kept === undefined) return null;
  const json = jsonOf(outcome.kept);
  return json === undefined || tooLarge(json) ? null : json;
}

/** Whether a result's JSON text exceeds `MAX_RESULT_BYTES` in UTF-8 (a code unit takes at most 3 bytes: short texts are not measured). */
export function tooLarge(json: string): boolean {
  return json.length > MAX_RESULT_BYTES / 3 && Buffer.byteLength(json) > MAX_RESULT_BYTES;
}

export function callEvent(step: PlanStep, tool: Tool, args: Record<string, unknown>, frame: Frame): NewEvent {
  return { type: 'tool', phase: 'call', stepId: step.id, name: tool.name, arguments: redactSecrets(args, tool.inputSchema), ...frame };
}

/** The value as JSON text (the text it was parsed from, when known); undefined when it has none (a cycle, a BigInt). */
export function jsonOf(v: unknown): string | undefined {
  const parsedFrom = resultJsonOf(v);
  if (parsedFrom !== undefined) return parsedFrom;
  try {
    return JSON.stringify(v ?? null);
  } catch {
    return undefined;
  }
}

