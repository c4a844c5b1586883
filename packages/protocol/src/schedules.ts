import type { PermissionMode } from './plan';

/** Schedules of published workflows as the API answers them (the host and the UI share these shapes). */

/** ISO weekdays: Monday = 1 … Sunday = 7. */
export type Weekday = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/** When a schedule fires: at a clock time in a time zone (daily, weekly, monthly), every N seconds, or once after a delay. */
export type Recurrence =
  | { kind: 'daily'; time: string; timeZone: string }
  | { kind: 'weekly'; time: string; timeZone: string; weekdays: Weekday[] }
  | { kind: 'monthly'; time: string; timeZone: string; day: number | 'last' }
  | { kind: 'interval'; everySeconds: number }
  | { kind: 'once'; delaySeconds: number };

export type ScheduleState = 'active' | 'paused' | 'expired' | 'done' | 'disabled';

/** A schedule as the API, the schedule tools and the UI show it. Times are ISO-8601 UTC. */
/** One file input of a schedule and the uploads it keeps for it. */
export interface ScheduleFile {
  name: string;
  refs: Array<{ id: string; name: string; size: number }>;
}

export interface ScheduleView {
  id: string;
  workflowId: string;
  recurrence: Recurrence;
  permissionMode: PermissionMode;
  inputs: Record<string, unknown>;
  /**
   * The uploads the schedule keeps for its file inputs (its own copies, granted to every fire,
   * released when the schedule is deleted); absent: none.
   */
  files?: ScheduleFile[];
  createdAt: string;
  nextRunAt: string | null;
  expiresAt?: string;
  triggerCount: number;
  missedFires: number;
  /**
   * The fires (newest first, at most 10, from the last 30 days) that fell while no host was
   * running, with that downtime: they did not run on time (one catch-up run at the next start,
   * or counted in `missedFires`). Absent when there are none.
   */
  firesWhileDown?: Array<{ at: string; downFrom: string; downUntil: string }>;
  lastError?: { code: string; message: string; at: string };
  lastTaskId?: string;
  state: ScheduleState;
  pausedReason?: string;
}
