import { randomUUID } from 'node:crypto';

/**
 * Approval gates of one run. One gate is open at a time (the approve endpoint names no gate);
 * further requests queue in order. A gate resolves to `approved`, `rejected` or `cancelled`.
 */

export type GateKind = 'plan' | 'step';
export type GateOutcome = { kind: 'approved'; plan?: unknown } | { kind: 'rejected'; reason: string } | { kind: 'cancelled' };

export interface OpenGate {
  id: string;
  kind: GateKind;
  stepId?: string;
  reason: string;
  detail?: Record<string, unknown>;
}

interface Pending extends OpenGate {
  resolve: (o: GateOutcome) => void;
  /** Called when the gate becomes the open one (emit the request event, persist status). */
  onOpen: (gate: OpenGate) => Promise<void>;
}

export class GateQueue {
  private current?: Pending;
  private readonly queue: Pending[] = [];

  get open(): OpenGate | undefined {
    if (!this.current) return undefined;
    const { resolve: _r, onOpen: _o, ...gate } = this.current;
    return gate;
  }

  get waiting(): number {
    return this.queue.length + (this.current ? 1 : 0);
  }

  request(kind: GateKind, reason: string, onOpen: (g: OpenGate) => Promise<void>, stepId?: string, detail?: Record<string, unknown>): Promise<GateOutcome> {
    return new Promise<GateOutcome>((resolve) => {
      const pending: Pending = { id: randomUUID(), kind, stepId, reason, detail, resolve, onOpen };
      this.queue.push(pending);
      void this.advance();
    });
  }

  /** Resolves the open gate; the next queued one opens. Returns the gate resolved. */
  resolve(outcome: GateOutcome): OpenGate | undefined {
    const gate = this.current;
    if (!gate) return undefined;
    this.current = undefined;
    gate.resolve(outcome);
    void this.advance();
    const { resolve: _r, onOpen: _o, ...rest } = gate;
    return rest;
  }

  cancelAll(): void {
    const all = [...(this.current ? [this.current] : []), ...this.queue.splice(0)];
    this.current = undefined;
    for (const g of all) g.resolve({ kind: 'cancelled' });
  }

  private async advance(): Promise<void> {
    if (this.current || this.queue.length === 0) return;
    const next = this.queue.shift() as Pending;
    this.current = next;
    try {
      await next.onOpen(this.open as OpenGate);
    } catch {
      this.current = undefined;
      next.resolve({ kind: 'cancelled' });
      void this.advance();
    }
  }
}
