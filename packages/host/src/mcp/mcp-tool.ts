import { FengYuError, type JsonSchema, stableHash, type ToolEffect } from '@fengyu/protocol';

/**
 * Pure mapping between MCP and FengYu: an MCP tool definition becomes catalog facts (qualified
 * name, id, effect, idempotence), and a `tools/call` result becomes a JSON value or a
 * `tool_failed` rejection.
 */

/** The parts of an MCP `Tool` we use (types from the SDK are structurally compatible). */
export interface McpToolDef {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  outputSchema?: { type: 'object'; [k: string]: unknown };
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean; title?: string };
}

export interface McpToolFacts {
  name: string;
  id: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  effect: ToolEffect;
  idempotent: boolean;
  schemaRevision: string;
}

/** MCP tool names as the MCP spec allows them (1–128 of A–Z a–z 0–9 _ - .). */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export function qualifiedName(server: string, tool: string): string {
  return `${server}__${tool}`;
}

/** readOnlyHint → read; else openWorldHint → external; else write. */
export function effectOf(annotations: McpToolDef['annotations']): ToolEffect {
  if (annotations?.readOnlyHint === true) return 'read';
  if (annotations?.openWorldHint === true) return 'external';
  return 'write';
}

export function toolFacts(server: string, def: McpToolDef): McpToolFacts {
  const inputSchema = { ...def.inputSchema } as JsonSchema;
  const outputSchema = def.outputSchema ? ({ ...def.outputSchema } as JsonSchema) : undefined;
  return {
    name: qualifiedName(server, def.name),
    id: `mcp:${server}:${def.name}`,
    description: def.description ?? def.title ?? def.annotations?.title ?? '',
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    effect: effectOf(def.annotations),
    idempotent: def.annotations?.idempotentHint === true,
    schemaRevision: stableHash({ inputSchema, outputSchema: outputSchema ?? null }),
  };
}

interface ContentBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; blob?: string; mimeType?: string };
}

export interface McpCallResult {
  content?: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** The pre-2025 result shape (`CompatibilityCallToolResultSchema`). */
  toolResult?: unknown;
}

function textOf(blocks: ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    else if (b.type === 'resource' && typeof b.resource?.text === 'string') parts.push(b.resource.text);
  }
  return parts.join('\n');
}

/** Binary payloads are described, not copied: results travel through the run log. */
function summarize(b: ContentBlock): Record<string, unknown> {
  if (b.type === 'image' || b.type === 'audio') return { type: b.type, mimeType: b.mimeType, bytes: Math.floor(((b.data ?? '').length * 3) / 4) };
  if (b.type === 'resource') {
    const r = b.resource ?? {};
    return { type: 'resource', uri: r.uri, mimeType: r.mimeType, ...(r.blob ? { bytes: Math.floor((r.blob.length * 3) / 4) } : {}) };
  }
  if (b.type === 'resource_link') return { type: 'resource_link', uri: b.uri, name: b.name, mimeType: b.mimeType };
  return { type: b.type };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The JSON value of a call: `structuredContent` if present; else the text content joined (parsed
 * when it is JSON); else a summary of non-text blocks. `isError: true` rejects with `tool_failed`.
 */
export function mapCallResult(toolName: string, result: McpCallResult): unknown {
  const blocks = Array.isArray(result.content) ? result.content : [];
  if (result.isError === true) {
    throw new FengYuError('tool_failed', { name: toolName, reason: textOf(blocks) || 'the MCP server reported an error' });
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  if (!('content' in result) && 'toolResult' in result) return result.toolResult;
  const text = textOf(blocks);
  if (text !== '' || blocks.length === 0) return blocks.length === 0 ? null : parseJson(text);
  return { content: blocks.map(summarize) };
}
