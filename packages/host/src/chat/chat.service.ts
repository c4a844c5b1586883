import { checkSchema, FengYuError, type PermissionMode, redactSecrets, type SecretValue } from '@fengyu/protocol';
import type { ModelMessage } from 'ai';
import type { Logger } from 'pino';
import type { FilesResolver } from '../agent/agent.service';
import type { Clock } from '../clock';
import type { ResolvedBackend, BackendResolver } from '../models/backend-resolver';
import { fileRefsPrompt, injectFileArgument } from '../models/file-routing';
import { callToolGuarded, errorText } from '../models/tool-call';
import { DEFAULT_MAX_ROUNDS, runToolLoop } from '../models/tool-loop';
import type { PermissionGuard } from '../permissions/types';
import type { ToolCatalog } from '../tools/catalog';
import type { FileGrant, Tool } from '../tools/tool';
import type { ChatGates } from './chat-gates';
import type { ConversationRepository, ConversationSummary } from './conversation.repository';

/**
 * AI Chat: one user message → a bounded tool loop over the owner's live catalog, streamed as
 * frames (`start`, `token`, `tool`, `approval_requested`, `done`, `error`). Calls pass the
 * permission guard (caller `chat`); `ask` opens a chat gate. The turn is persisted on success.
 */

export type ChatFrame = 'start' | 'token' | 'tool' | 'approval_requested' | 'proposal' | 'done' | 'error';
export type ChatSink = (frame: ChatFrame, data: Record<string, unknown>) => void;

export interface ChatRequest {
  conversationId?: string;
  message: string;
  backend?: string;
  model?: string;
  permissionMode?: PermissionMode;
  files?: unknown;
}

export interface ChatDeps {
  repo: ConversationRepository;
  gates: ChatGates;
  resolver: BackendResolver;
  catalog: ToolCatalog;
  guard: () => PermissionGuard;
  clock: Clock;
  logger: Logger;
  resolveFiles?: () => FilesResolver | undefined;
  maxRounds?: number;
  /** The owner's secret values, hidden in tool answers (the vault's redaction list). */
  redactions?: (owner: string) => readonly SecretValue[];
}

/** A turn that passed every check and may start streaming. */
export interface PreparedTurn {
  owner: string;
  conversation: ConversationSummary;
  backend: ResolvedBackend;
  message: string;
  permissionMode: PermissionMode;
  grants: FileGrant[];
}

/** Request-scoped additions to one turn (the builder's AI panel binds its authoring tools here). */
export interface TurnExtras {
  /** Tools bound for this turn only, offered next to the owner's catalog. */
  tools?: readonly Tool[];
  /** Appended to the system prompt. */
  system?: string;
}

const HISTORY_LIMIT = 40;

const SYSTEM = [
  'You are FengYu, a local assistant that can use the tools provided to act on the user\'s computer and services.',
  'Use tools when they help. A denied or failed call comes back as an error result: do not repeat it; explain or find another way.',
  'Answer in the user\'s language.',
].join('\n');

export class ChatService {
  private readonly busy = new Set<string>();

  constructor(private readonly deps: ChatDeps) {}

  /** Every check that can fail with a plain HTTP error happens here, before streaming starts. */
  async prepare(owner: string, req: ChatRequest): Promise<PreparedTurn> {
    const backend = await this.deps.resolver.resolve(owner, req.backend, req.model);
    let conversation: ConversationSummary | undefined;
    if (req.conversationId) {
      conversation = await this.deps.repo.get(owner, req.conversationId);
      if (!conversation) throw new FengYuError('conversation_not_found', { conversationId: req.conversationId });
      if (this.busy.has(conversation.id)) throw new FengYuError('chat_busy', { conversationId: conversation.id });
      this.busy.add(conversation.id);
    }
    try {
      const hasFiles = Array.isArray(req.files) && req.files.length > 0;
      const resolver = this.deps.resolveFiles?.();
      if (hasFiles && !resolver) throw new FengYuError('invalid_request', { reason: 'file grants are not available on this host' });
      if (!conversation) {
        conversation = await this.deps.repo.create(owner, title(req.message), backend.id, backend.modelId, this.nowIso());
        this.busy.add(conversation.id);
      }
      const grants = hasFiles && resolver ? (await resolver(owner, `chat-${conversation.id}`, req.files)).grants : [];
      return { owner, conversation, backend, message: req.message, permissionMode: req.permissionMode ?? 'ask', grants };
    } catch (err) {
      if (conversation) this.busy.delete(conversation.id);
      throw err;
    }
  }

  /** Releases a prepared turn that will not be streamed. */
  release(turn: PreparedTurn): void {
    this.busy.delete(turn.conversation.id);
  }

  /** Streams one turn into `sink`. Never throws: failures become an `error` frame. */
  async stream(turn: PreparedTurn, sink: ChatSink, signal: AbortSignal, extras: TurnExtras = {}): Promise<void> {
    const conversationId = turn.conversation.id;
    try {
      sink('start', { conversationId, backend: turn.backend.id, model: turn.backend.modelId });
      const history = trimHistory((await this.deps.repo.messages(conversationId)).map((m) => m.message));
      const userMessage: ModelMessage = { role: 'user', content: turn.message };
      const catalog = await this.deps.catalog.snapshot(turn.owner);
      const files = fileRefsPrompt(turn.grants);
      const system = [SYSTEM, files, extras.system].filter(Boolean).join('\n\n');
      const result = await runToolLoop({
        model: turn.backend.model,
        backendId: turn.backend.id,
        system,
        messages: [...history, userMessage],
        tools: [...catalog.tools, ...(extras.tools ?? [])],
        maxRounds: this.deps.maxRounds ?? DEFAULT_MAX_ROUNDS,
        signal,
        onText: (text) => sink('token', { text }),
        call: (tool, rawArgs, callId) => {
          // Arguments are checked against the tool's schema before the guard and any approval:
          // a person is only ever asked about a call that can run exactly as shown.
          const args = injectFileArgument(tool, rawArgs, turn.grants);
          const issues = checkSchema(tool.inputSchema, args);
          if (issues.length > 0) {
            const error = `invalid arguments: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`;
            sink('tool', { phase: 'call', name: tool.name, callId, arguments: redactSecrets(args, tool.inputSchema) });
            sink('tool', { phase: 'result', name: tool.name, callId, error });
            return Promise.resolve({ success: false, error });
          }
          return callToolGuarded(
            {
              owner: turn.owner,
              caller: 'chat',
              conversationId,
              permissionMode: turn.permissionMode,
              guard: this.deps.guard(),
              grants: turn.grants,
              signal,
              redactions: this.deps.redactions?.(turn.owner) ?? [],
              emit: (type, payload) => {
                if (type === 'tool') sink('tool', payload);
                else this.deps.logger.debug({ conversationId, audit: { kind: payload.kind, tool: payload.tool, decision: payload.decision, source: payload.source } }, 'chat audit');
              },
              askApproval: (reason, detail) => this.approval(turn, sink, signal, reason, detail),
            },
            tool,
            args,
            callId,
          );
        },
      });
      await this.deps.repo.append(conversationId, [userMessage, ...result.responseMessages], this.nowIso());
      sink('done', { conversationId, text: result.text });
    } catch (err) {
      this.deps.logger.warn({ conversationId, code: (err as { code?: string }).code }, 'chat turn failed');
      sink('error', { conversationId, message: errorText(err), ...((err as { code?: string }).code ? { code: (err as { code: string }).code } : {}) });
    } finally {
      this.deps.gates.rejectAll(conversationId);
      this.busy.delete(conversationId);
    }
  }

  private async approval(
    turn: PreparedTurn,
    sink: ChatSink,
    signal: AbortSignal,
    reason: string,
    detail: { tool: string; arguments: unknown; effect: string; callId: string },
  ): Promise<boolean> {
    const conversationId = turn.conversation.id;
    const gate = this.deps.gates.open(turn.owner, conversationId);
    const onAbort = () => this.deps.gates.rejectAll(conversationId);
    signal.addEventListener('abort', onAbort, { once: true });
    sink('approval_requested', { conversationId, gateId: gate.gateId, tool: detail.tool, arguments: detail.arguments, effect: detail.effect, reason, callId: detail.callId });
    try {
      return await gate.decision;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private nowIso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

function title(message: string): string {
  const line = message.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line || 'Conversation';
}

/** The last messages, cut at a user message so no tool result loses its call. */
export function trimHistory(messages: ModelMessage[], limit = HISTORY_LIMIT): ModelMessage[] {
  if (messages.length <= limit) return messages;
  const tail = messages.slice(-limit);
  const firstUser = tail.findIndex((m) => m.role === 'user');
  return firstUser < 0 ? [] : tail.slice(firstUser);
}
