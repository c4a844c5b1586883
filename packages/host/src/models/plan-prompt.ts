import { type CatalogEntry, agentPlanJsonSchema } from '@fengyu/protocol';

/**
 * Pure prompt building and answer parsing for planning. The model sees the goal, the catalog
 * (names, descriptions, effects, input schemas), the run's inputs, relevant memories and the
 * AgentPlan JSON schema; it gets no tools, so it can only structure the workflow.
 */

export interface PlanPromptInput {
  goal: string;
  catalog: readonly CatalogEntry[];
  inputs: Record<string, unknown>;
  memories: readonly string[];
  /** Grants attached to the run (names usable as `@file:<name>`). */
  fileInputs?: readonly string[];
  /** The owner's secret names (never a value): usable as `{{secrets.<NAME>}}` in tool arguments. */
  secretNames?: readonly string[];
}

/**
 * Conditions and loops (the control-flow format every surface shares), taught with one short
 * example each; the drafted plan is checked by the same validator as every other plan.
 */
const CONTROL_FLOW_RULES = [
  'To branch, add a condition step: {"id":"check","kind":"condition","cases":[{"name":"big","when":{"all":[{"left":"{{node.count.result.rows}}","op":"gt","right":1000}]}}]}. Its first case whose "when" holds is taken, else the branch "else". Steps after it depend on a port: "dependsOn":["check:big"] or ["check:else"]; a step on a branch not taken is skipped, and so is everything that needs it. A step after both branches says "dependsOn":["a","b"],"join":"any".',
  'Case names match ^[a-z][a-z0-9_]{0,31}$ (never "else" or "error"). "when" is {"all":[…]} or {"any":[…]} of comparisons {"left","op","right"}; op is one of eq, ne, gt, gte, lt, lte, contains, startsWith, endsWith, in (right is an array), matches (right is a regular expression), exists, empty (these two take no right). A condition has no tool and no arguments.',
  'When only judgement can decide, let the model choose: a condition with "instruction" and cases with a "description" instead of "when".',
  'To repeat work for each element of a list, add a forEach step: {"id":"each","kind":"forEach","items":"{{node.split.result.files}}","concurrency":2,"dependsOn":["split"],"steps":[{"id":"mail","tool":"…","arguments":{"to":"{{item.owner}}","subject":"Part {{index}}"}}]}. Inside its body "steps", {{item}} / {{item.<field>}} is the element and {{index}} its 0-based position; body steps depend only on each other and may hold conditions, never another forEach. Outside, only the loop\'s result (a list, per item the result of the body\'s last step) can be read: {{node.each.result}}.',
];

const RULES = [
  'Reply with ONE JSON object that matches the AgentPlan schema, and nothing else (no prose; a ```json fence is tolerated).',
  'Tools are NOT callable now: you only structure the workflow; the host executes it after a human approves it.',
  'Use only tool names from the catalog, with arguments valid against the tool\'s input schema.',
  'A step without "tool" is a model step and needs an "instruction"; it may itself call catalog tools when it runs.',
  'Step ids match ^[A-Za-z][A-Za-z0-9_-]{0,63}$ and are unique. List prerequisites in "dependsOn"; steps with no path between them run in parallel.',
  'To use an earlier result, write {{node.<id>.result}} (or a path like {{node.<id>.result.files[0].name}}) inside an argument string, and list <id> in dependsOn. {{inputs.<name>}} reads a run input; @file:<name> passes an attached file.',
  'Keep plans short: at most 64 steps, usually far fewer. Only read tools may have "retry".',
  ...CONTROL_FLOW_RULES,
];

export function planSystemPrompt(input: PlanPromptInput): string {
  const tools = input.catalog
    .filter((t) => t.available)
    .map((t) => ({ name: t.name, description: t.description, effect: t.effect, inputSchema: t.inputSchema }));
  const parts = [
    'You are the planner of FengYu, a local agent and workflow host. You turn a goal into an AgentPlan.',
    `Rules:\n${RULES.map((r) => `- ${r}`).join('\n')}`,
    `AgentPlan JSON schema:\n${JSON.stringify(agentPlanJsonSchema())}`,
    `Tool catalog (${tools.length}):\n${tools.map((t) => JSON.stringify(t)).join('\n') || '(empty: use model steps only)'}`,
    `Run inputs (reference as {{inputs.<name>}}):\n${Object.keys(input.inputs).length ? JSON.stringify(input.inputs) : '(none)'}`,
  ];
  if (input.secretNames?.length) {
    parts.push(
      `The user's secrets (reference as {{secrets.<NAME>}} only inside a tool step's "arguments", never in a goal, instruction or title; the host puts the value in when the tool runs, you never see it): ${input.secretNames.join(', ')}`,
    );
  }
  if (input.fileInputs?.length) parts.push(`Attached files (reference as @file:<name>): ${input.fileInputs.join(', ')}`);
  if (input.memories.length) {
    parts.push(`Things the user asked you to remember (may be relevant):\n${input.memories.map((m) => `- ${m}`).join('\n')}`);
  }
  return parts.join('\n\n');
}

export function repairPrompt(problems: readonly string[]): string {
  return [
    'The plan you drafted is invalid. The validator reported:',
    ...problems.map((p) => `- ${p}`),
    'Reply with the complete corrected AgentPlan JSON object only.',
  ].join('\n');
}

export type ParsedAnswer = { ok: true; value: unknown } | { ok: false; reason: string };

/** Parses a model's JSON answer, tolerating ```json fences and prose around one JSON object. */
export function parseJsonAnswer(text: string): ParsedAnswer {
  const trimmed = text.trim();
  const candidates: string[] = [];
  const fence = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(trimmed);
  if (fence?.[1]) candidates.push(fence[1].trim());
  candidates.push(trimmed);
  const first = trimmed.indexOf('{');
  const last = trimmed.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(trimmed.slice(first, last + 1));
  let reason = 'empty answer';
  for (const c of candidates) {
    if (!c) continue;
    try {
      return { ok: true, value: JSON.parse(c) };
    } catch (e) {
      reason = e instanceof Error ? e.message : String(e);
    }
  }
  return { ok: false, reason };
}
