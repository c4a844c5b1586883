import { randomUUID } from 'node:crypto';
import type { CapacityRefusal, SubmitTaskRequest, TaskSnapshot, TaskSubmitter } from '../../src/tasks/task-submitter';

/**
 * A small in-memory TaskSubmitter for unit tests of producers: admits until `capacity` tasks are
 * active, then refuses; tasks stay running until the test finishes them.
 */
export class MemoryTasks implements TaskSubmitter {
  readonly tasks = new Map<string, TaskSnapshot>();
  readonly submitted: SubmitTaskRequest[] = [];
  capacity = Number.POSITIVE_INFINITY;
  refusal: CapacityRefusal = { capacityScope: 'global', retryable: true, retryAfterSeconds: 1 };
  /** Makes the next submissions wait until released (to hold deliveries in flight). */
  gate?: Promise<void>;
  private listeners = new Set<(t: TaskSnapshot) => void>();

  active(): number {
    return [...this.tasks.values()].filter((t) => t.state === 'queued' || t.state === 'running').length;
  }

  async submit(req: SubmitTaskRequest) {
    if (this.gate) await this.gate;
    if (this.active() >= this.capacity) return { ok: false as const, refusal: this.refusal };
    this.submitted.push(req);
    const task: TaskSnapshot = {
      id: `task-${randomUUID()}`,
      ownerId: req.ownerId,
      kind: req.kind,
      priority: req.priority,
      state: 'running',
      queued: false,
      workflowId: req.workflowId,
      workflowVersion: 1,
      ...(req.triggerId ? { triggerId: req.triggerId } : {}),
      submittedAt: new Date().toISOString(),
      startedAt: new Date().toISOString(),
      queueWaitMs: 0,
      output: { text: '', truncated: false },
    };
    this.tasks.set(task.id, task);
    return { ok: true as const, task: { ...task } };
  }

  async get(ownerId: string, taskId: string) {
    const t = this.tasks.get(taskId);
    return t && t.ownerId === ownerId ? { ...t } : undefined;
  }

  onFinished(listener: (t: TaskSnapshot) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  finish(taskId: string, state: 'completed' | 'failed' | 'cancelled' | 'interrupted', error?: { code: string; message: string }) {
    const t = this.tasks.get(taskId);
    if (!t) throw new Error(`no task ${taskId}`);
    Object.assign(t, { state, finishedAt: new Date().toISOString(), ...(error ? { error } : {}) });
    for (const l of this.listeners) l({ ...t });
  }
}
