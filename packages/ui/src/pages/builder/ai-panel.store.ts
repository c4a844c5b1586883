import { jsonCopy, type Locale, type PermissionMode } from '@fengyu/protocol';
import { defineStore } from 'pinia';
import { computed, ref, shallowRef } from 'vue';
import { ApiError } from '../../api/client';
import { diagnosticMessage } from '../../flow/diagnostics';
import type { chatApi } from '../chat/chat.api';
import { canvasFingerprint, type DiffView, diffView, type Proposal, rehydrate, type StaleReason, staleReason } from './ai-panel';
import { useBuilder } from './builder.store';

/**
 * The builder's AI panel: one conversation of chat turns over snapshots of the live canvas, the
 * open proposal (shown on the canvas as a diff while it is open) and its apply/dismiss path.
 * Apply refuses a stale proposal, puts the rehydrated graph on the canvas as one undoable edit,
 * and saves through the builder's normal save (optimistic revision check); when the graph does
 * not validate the proposal stays open for review and nothing is saved.
 */

export interface PanelItem {
  kind: 'user' | 'assistant' | 'tool' | 'gate' | 'error' | 'note';
  text: string;
  name?: string;
  callId?: string;
  detail?: unknown;
  failed?: boolean;
  gateId?: string;
  answered?: boolean;
}

type Api = ReturnType<typeof chatApi>;

export const useAiPanel = defineStore('ai-panel', () => {
  const builder = useBuilder();
  const api = shallowRef<Api>();
  const items = ref<PanelItem[]>([]);
  const busy = ref(false);
  const conversationId = ref<string>();
  const permissionMode = ref<PermissionMode>('ask');
  const noBackend = ref(false);
  const proposal = ref<Proposal>();
  /** open: shown as a diff; stale: refused (the canvas or revision moved); review: on the canvas, not valid. */
  const proposalState = ref<'open' | 'stale' | 'review'>('open');
  const stale = ref<StaleReason>();
  const lastRunError = ref<string>();
  let abort: AbortController | undefined;
  let onSaved: (id: string) => void = () => {};

  const view = computed<DiffView | undefined>(() => (proposal.value && proposalState.value !== 'review' ? diffView(builder.graph, proposal.value) : undefined));

  function init(a: Api, saved: (id: string) => void) {
    api.value = a;
    onSaved = saved;
  }

  /** A new flow was loaded: the conversation and any proposal belong to the previous one. */
  function reset() {
    abort?.abort();
    items.value = [];
    conversationId.value = undefined;
    proposal.value = undefined;
    stale.value = undefined;
    busy.value = false;
  }

  function assistantItem(): PanelItem {
    const last = items.value.at(-1);
    if (last?.kind === 'assistant') return last;
    items.value.push({ kind: 'assistant', text: '' });
    return items.value.at(-1) as PanelItem;
  }

  function onFrame(frame: string, data: Record<string, unknown>, sentFingerprint: string) {
    if (frame === 'start') {
      conversationId.value = String(data.conversationId);
      const w = data.workflow as { id: string; revision: number; state: 'draft' | 'published'; autoSaved: boolean } | null;
      // the host saved exactly the snapshot; adopt it only if the canvas has not moved since
      if (w?.autoSaved && canvasFingerprint(builder.graph) === sentFingerprint) {
        builder.adoptSaved(w);
        onSaved(w.id);
      }
    } else if (frame === 'token') assistantItem().text += String(data.text ?? '');
    else if (frame === 'tool') {
      if (data.phase === 'call') items.value.push({ kind: 'tool', text: '', name: String(data.name), callId: String(data.callId), detail: data.arguments });
      else {
        const item = items.value.find((i) => i.kind === 'tool' && i.callId === data.callId);
        if (item) {
          item.failed = data.error !== undefined;
          item.text = data.error !== undefined ? String(data.error) : JSON.stringify(data.result ?? null).slice(0, 400);
        }
        if (data.name === 'run_current_flow' && data.error !== undefined) lastRunError.value = String(data.error);
      }
    } else if (frame === 'approval_requested') items.value.push({ kind: 'gate', text: String(data.reason ?? ''), name: String(data.tool), gateId: String(data.gateId), detail: data.arguments });
    else if (frame === 'proposal') {
      proposal.value = data as unknown as Proposal;
      proposalState.value = 'open';
      stale.value = undefined;
    } else if (frame === 'error') items.value.push({ kind: 'error', text: String(data.message ?? '') });
  }

  async function send(message: string, locale: Locale) {
    const a = api.value;
    if (!a || busy.value || !message.trim()) return;
    items.value.push({ kind: 'user', text: message });
    busy.value = true;
    noBackend.value = false;
    abort = new AbortController();
    const graph = jsonCopy(builder.graph);
    const sentFingerprint = canvasFingerprint(graph);
    const canvas = {
      graph,
      ...(builder.workflowId ? { workflowId: builder.workflowId, revision: builder.meta.revision } : {}),
      name: builder.name,
      description: builder.description,
      goal: builder.goal,
      diagnostics: builder.diagnostics.map((d) => ({ ...d, message: diagnosticMessage(d, locale) })),
      ...(lastRunError.value ? { lastRunError: lastRunError.value } : {}),
    };
    try {
      await a.assist({ message, permissionMode: permissionMode.value, ...(conversationId.value ? { conversationId: conversationId.value } : {}), canvas }, (f, d) => onFrame(f, d, sentFingerprint), abort.signal);
    } catch (e) {
      if ((e as Error).name === 'AbortError') return;
      if (e instanceof ApiError && (e.code === 'no_chat_backend' || e.code === 'unknown_backend')) noBackend.value = true;
      else items.value.push({ kind: 'error', text: (e as Error).message });
    } finally {
      busy.value = false;
    }
  }

  function stop() {
    abort?.abort();
  }

  async function answer(item: PanelItem, approve: boolean) {
    if (!api.value || !conversationId.value || !item.gateId || item.answered) return;
    item.answered = true;
    try {
      await api.value.answer(conversationId.value, item.gateId, approve);
    } catch (e) {
      items.value.push({ kind: 'error', text: (e as Error).message });
    }
  }

  /** Apply and save: refuses a stale proposal; one undoable edit; the normal save path. */
  async function apply(): Promise<boolean> {
    const p = proposal.value;
    if (!p) return false;
    const reason = proposalState.value === 'review' ? undefined : staleReason(p, builder.graph, { workflowId: builder.workflowId, revision: builder.meta.revision });
    if (reason) {
      stale.value = reason;
      proposalState.value = 'stale';
      return false;
    }
    if (proposalState.value !== 'review') builder.replaceGraph(rehydrate(p, builder.catalog));
    if (builder.diagnostics.length > 0) {
      proposalState.value = 'review';
      return false;
    }
    const def = await builder.save();
    if (!def) {
      proposalState.value = 'review';
      return false;
    }
    proposal.value = undefined;
    items.value.push({ kind: 'note', text: String(def.revision) });
    onSaved(def.id);
    return true;
  }

  function dismiss() {
    proposal.value = undefined;
    stale.value = undefined;
  }

  return { items, busy, conversationId, permissionMode, noBackend, proposal, proposalState, stale, view, init, reset, send, stop, answer, apply, dismiss };
});
