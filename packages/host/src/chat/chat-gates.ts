import { randomUUID } from 'node:crypto';
import { FengYuError } from '@fengyu/protocol';

/**
 * Pending chat approvals (the confirmation card). A gate opens when the guard asks about a tool
 * call and resolves through POST /api/chat/{conversationId}/approve, or as rejected when the
 * stream ends (client gone, error, cancel). Gates are in memory: they live only as long as the
 * streaming request that waits on them.
 */

interface Pending {
  owner: string;
  conversationId: string;
  resolve: (approved: boolean) => void;
}

export class ChatGates {
  private readonly pending = new Map<string, Pending>();

  open(owner: string, conversationId: string): { gateId: string; decision: Promise<boolean> } {
    const gateId = randomUUID();
    const decision = new Promise<boolean>((resolve) => {
      this.pending.set(gateId, {
        owner,
        conversationId,
        resolve: (approved) => {
          this.pending.delete(gateId);
          resolve(approved);
        },
      });
    });
    return { gateId, decision };
  }

  /** Releases a gate; 409 `chat_no_pending_gate` when it is not open for this owner and conversation. */
  resolve(owner: string, conversationId: string, gateId: string, approve: boolean): void {
    const p = this.pending.get(gateId);
    if (!p || p.owner !== owner || p.conversationId !== conversationId) {
      throw new FengYuError('chat_no_pending_gate', { conversationId, gateId });
    }
    p.resolve(approve);
  }

  /** Rejects every gate of a conversation (its stream ended). */
  rejectAll(conversationId: string): void {
    for (const p of [...this.pending.values()]) if (p.conversationId === conversationId) p.resolve(false);
  }
}
