/** @fengyu/protocol — the contract as code, shared by host, UI, SDK and CLI. No I/O. */
// The tool catalog: entries, effects, schema revisions, secret redaction.
export * from './catalog';
// The error table, `FengYuError` and validation `Problem`s.
export * from './errors';
// Run events: the durable log and the SSE stream.
export * from './events';
// Messages in every supported language (`en`, `zh-CN`) and the `{param}` renderer.
export { HOST_TEXT_CODES, hostErrorText, hostText } from './i18n/host-text';
export { isLocalText, LOCALES, type Locale, type LocalText, localize, MESSAGES, paramText, pickLocale, renderTemplate } from './i18n/index';
// The AgentPlan, its limits, per-run config and run statuses.
export * from './plan';
// Control flow in plans: step kinds, condition cases, ports, joins, forEach limits.
export * from './control-flow';
// Condition evaluation (pure): comparisons, the branch taken, a model's answer.
export * from './condition';
// The `{{…}}` / `@file:` reference grammar and its resolver.
export * from './references';
export * from './shell-template';
// Secrets: names, where a reference may stand, and the one redaction of values.
export * from './secrets';
// JSON Schema checking of tool arguments and workflow inputs.
export * from './schema-check';
export { linearEngineReady, loadLinearEngine } from './safe-regexp';
export { zodIssueText } from './zod-issue';
// Full plan validation (every problem at once).
export * from './validate';
export * from './folder-check';
export { compilePattern, regexParts } from './validate-flow';
// The plugin manifest schema and its patterns.
export * from './manifest';
// Full manifest validation with coded problems.
export * from './manifest-check';
// Keys refused in JSON bodies (prototype pollution).
export * from './object-keys';
// Tool names reserved for built-in families.
export * from './reserved-tools';
// Workflow definitions, input contracts and save-time validation; binding a run's inputs.
export * from './workflow';
export * from './workflow-inputs';
// The canvas graph document: its shape and helpers.
export * from './graph-model';
// The Start node's fields ⇄ the input schema.
export * from './graph-fields';
// The canvas graph's translation to the plan (graph → plan).
export * from './plan-graph';
// Workflow export documents, imports and version diffs.
export * from './portability';
// Published workflows served over MCP: the setting and the tool names.
export * from './mcp-serving';
// The plan's translation to a laid-out canvas graph (plan → graph).
export * from './graph-layout';
// Graph diagnostics, diffs and fingerprints.
export * from './graph-check';
export * from './graph-explain';
// Background tasks and webhook triggers as the API answers them.
export * from './tasks';
// Schedules: recurrences and the schedule as answered.
export * from './schedules';
// Installed plugins as answered, and the sandbox posture.
export * from './plugin-view';
// The settings document's fixed choices (hook events, model providers).
export * from './settings';
// Chat conversations as answered.
export * from './chat';
// Run history as answered: list items, details, step executions.
export * from './runs';
// Configured MCP servers as answered.
export * from './mcp-view';
// The builder AI panel's edit proposal.
export * from './assist';
// The inbox of pending gates and inputs, and its stream frames.
export * from './inbox';
// Input steps' forms and the field-level check of a person's values.
export * from './input-form';
