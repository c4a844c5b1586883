import { FengYuError } from '@fengyu/protocol';
import type { JSONSchema7, LanguageModel, ModelMessage, ToolSet } from 'ai';
import { modelImageOf } from '../tools/model-image';
import type { Tool } from '../tools/tool';
import { aiSdk } from './ai-sdk';
import { modelError } from './model-text';

/**
 * The bounded tool loop shared by model steps and chat: the model may call catalog tools for up
 * to `maxRounds` rounds; the last round has no tools, so it must answer in text. Every call goes
 * through `call` (the guarded path in tool-call.ts), which always returns a value for the model.
 */

export const DEFAULT_MAX_ROUNDS = 8;
/** Larger tool results reach the model as a truncated preview (the `tool` event keeps them whole). */
export const MAX_RESULT_CHARS_FOR_MODEL = 32_000;

/** The value the model sees for a tool result: the result itself, or a clipped JSON preview. */
export function forModel(result: unknown): unknown {
  const text = JSON.stringify(result ?? null);
  if (text.length <= MAX_RESULT_CHARS_FOR_MODEL) return result ?? null;
  return { truncated: true, totalChars: text.length, preview: text.slice(0, MAX_RESULT_CHARS_FOR_MODEL) };
}

export interface ToolLoopRequest {
  model: LanguageModel;
  backendId: string;
  system: string;
  messages: ModelMessage[];
  tools: readonly Tool[];
  maxRounds?: number;
  signal: AbortSignal;
  onText?: (text: string) => void;
  call: (tool: Tool, args: Record<string, unknown>, callId: string) => Promise<unknown>;
  maxRetries?: number;
  /** Whether the backend takes images inside tool results; default: from the model's provider. */
  imageResults?: boolean;
}

/** Providers whose chat API accepts image parts in tool results (Anthropic messages). */
export function acceptsImageResults(model: LanguageModel): boolean {
  return typeof model === 'object' && /^anthropic/.test(model.provider);
}

/** What stored history keeps of an image part sent to the model: a note, never the pixels. */
export const IMAGE_PART_NOTE = '[image shown to the model; see the FileRef in the result]';

/** The loop's messages with every tool-result image part replaced by a short note. */
export function withoutImageParts(messages: ModelMessage[]): ModelMessage[] {
  return messages.map((m) => {
    if (m.role !== 'tool' || !Array.isArray(m.content)) return m;
    const content = m.content.map((part) => {
      if (part.type !== 'tool-result' || part.output.type !== 'content') return part;
      const value = part.output.value.map((v) => (v.type === 'image-data' || v.type === 'file-data' ? { type: 'text' as const, text: IMAGE_PART_NOTE } : v));
      return { ...part, output: { ...part.output, value } };
    });
    return { ...m, content } as ModelMessage;
  });
}

export interface ToolLoopResult {
  /** Every text chunk of every round, concatenated (what a chat shows). */
  text: string;
  /** The last round's text: the model's final answer. */
  finalText: string;
  /** The assistant and tool messages the loop produced (to persist a conversation). */
  responseMessages: ModelMessage[];
  toolCalls: number;
}

/** A provider-safe tool name (`^[A-Za-z0-9_-]{1,64}$`), unique within `taken`. */
export function wireName(name: string, taken: Set<string>): string {
  const base = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
  let candidate = base;
  for (let i = 2; taken.has(candidate); i++) candidate = `${base.slice(0, 60)}_${i}`;
  taken.add(candidate);
  return candidate;
}

function objectSchema(schema: Record<string, unknown>): JSONSchema7 {
  if (schema.type === 'object') return schema as JSONSchema7;
  return { properties: {}, ...schema, type: 'object' } as JSONSchema7;
}

export async function toToolSet(tools: readonly Tool[], call: ToolLoopRequest['call'], imageResults = false): Promise<ToolSet> {
  const { dynamicTool, jsonSchema } = await aiSdk();
  const taken = new Set<string>();
  const set: ToolSet = {};
  // Images attached to results, by tool call, until the SDK turns the result into model input.
  const images = new Map<string, { data: string; mediaType: string }>();
  for (const t of tools) {
    if (!t.available) continue;
    set[wireName(t.name, taken)] = dynamicTool({
      description: t.description,
      inputSchema: jsonSchema(objectSchema(t.inputSchema)),
      execute: async (input, options) => {
        const args = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
        const result = await call(t, args, options.toolCallId);
        const image = imageResults ? modelImageOf(result) : undefined;
        if (image) images.set(options.toolCallId, { data: image.data.toString('base64'), mediaType: image.mediaType });
        return forModel(result);
      },
      toModelOutput: ({ toolCallId, output }) => {
        const image = images.get(toolCallId);
        images.delete(toolCallId);
        if (!image) return typeof output === 'string' ? { type: 'text', value: output } : { type: 'json', value: (output ?? null) as never };
        return { type: 'content', value: [{ type: 'text', text: JSON.stringify(output ?? null) }, { type: 'image-data', data: image.data, mediaType: image.mediaType }] };
      },
    });
  }
  return set;
}

export async function runToolLoop(req: ToolLoopRequest): Promise<ToolLoopResult> {
  const maxRounds = req.maxRounds ?? DEFAULT_MAX_ROUNDS;
  const tools = await toToolSet(req.tools, req.call, req.imageResults ?? acceptsImageResults(req.model));
  const { stepCountIs, streamText } = await aiSdk();
  let text = '';
  let toolCalls = 0;
  try {
    const result = streamText({
      model: req.model,
      system: req.system,
      messages: req.messages,
      tools,
      abortSignal: req.signal,
      maxRetries: req.maxRetries ?? 1,
      // failures arrive as `error` parts below; the default handler would print them to stderr
      onError: () => {},
      stopWhen: stepCountIs(maxRounds + 1),
      prepareStep: ({ stepNumber }) => (stepNumber >= maxRounds ? { activeTools: [] } : undefined),
    });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        text += part.text;
        if (part.text) req.onText?.(part.text);
      } else if (part.type === 'tool-call') {
        toolCalls++;
      } else if (part.type === 'error') {
        throw part.error;
      } else if (part.type === 'abort') {
        throw new FengYuError('model_cancelled', { backend: req.backendId });
      }
    }
    const steps = await result.steps;
    const finalText = steps.at(-1)?.text ?? '';
    const responseMessages = withoutImageParts((await result.response).messages as ModelMessage[]);
    return { text, finalText: finalText || text, responseMessages, toolCalls };
  } catch (err) {
    throw modelError(err, req.backendId, req.signal);
  }
}
