import type { PermissionMode } from './plan';

/** Schedules of published workflows as the API answers them (the host and the UI share these shapes). */

/** ISO weekdays: Monday = 1 … Sunday = 7. */
export type Weekday = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/** When a schedule fires: at a clock time in a time zone (daily, weekly, monthly), every N seconds, or once after a delay. */
export type Recurrence =
  | {
      /** Every day at `time`. */
      kind: 'daily';
      /** The clock time, `HH:MM` (24 h). */
      time: string;
      /** The IANA time zone `time` is read in, canonically spelled (`Asia/Shanghai`). */
      timeZone: string;
    }
  | {
      /** On the given weekdays at `time`. */
      kind: 'weekly';
      /** The clock time, `HH:MM` (24 h). */
      time: string;
      /** The IANA time zone `time` is read in. */
      timeZone: string;
      /** The ISO weekdays it fires on (at least one). */
      weekdays: Weekday[];
    }
  | {
      /** On one day of each month at `time`. */
      kind: 'monthly';
      /** The clock time, `HH:MM` (24 h). */
      time: string;
      /** The IANA time zone `time` is read in. */
      timeZone: string;
      /** The day of the month, 1–31 (a shorter month fires on its last day), or `last`. */
      day: number | 'last';
    }
  | {
      /** At `createdAt + k·everySeconds` (k ≥ 1); expires after 7 days. */
      kind: 'interval';
      /** The period in whole seconds, at least 60. */
      everySeconds: number;
    }
  | {
      /** Once, at `createdAt + delaySeconds`; then the schedule is `done`. */
      kind: 'once';
      /** The delay in whole seconds, at least 60. */
      delaySeconds: number;
    };

/**
 * `active`; `paused` (see `pausedReason`); `expired` (an interval past its 7 days); `done` (a
 * one-shot that fired); `disabled` (its workflow was deleted).
 */
export type ScheduleState = 'active' | 'paused' | 'expired' | 'done' | 'disabled';

/** One file input of a schedule and the uploads it keeps for it. */
export interface ScheduleFile {
  /** The workflow's file input. */
  name: string;
  /** The schedule's copies of the uploads for it: file id, file name, size in bytes. */
  refs: Array<{
    /** The file's id. */
    id: string;
    /** The file's name. */
    name: string;
    /** Its size in bytes. */
    size: number;
  }>;
}

/** A schedule as the API, the schedule tools and the UI show it. Times are ISO-8601 UTC. */
export interface ScheduleView {
  /** The schedule's id (`sch_…`). */
  id: string;
  /** The published workflow each fire runs. */
  workflowId: string;
  /** When it fires. */
  recurrence: Recurrence;
  /** The permission mode of the runs it starts (nobody is there to approve). */
  permissionMode: PermissionMode;
  /** The workflow inputs every fire runs with. */
  inputs: Record<string, unknown>;
  /**
   * The uploads the schedule keeps for its file inputs (its own copies, granted to every fire,
   * released when the schedule is deleted); absent: none.
   */
  files?: ScheduleFile[];
  /** When it was created (an interval's and a one-shot's fires count from it). */
  createdAt: string;
  /** Its next fire; null when it fires no more (expired, done, disabled). */
  nextRunAt: string | null;
  /** An interval's expiry, 7 days after creation; absent for other recurrences. */
  expiresAt?: string;
  /** Occurrences submitted as tasks. */
  triggerCount: number;
  /** Occurrences that did not run (downtime, capacity refusals, submission errors, a claim caught by a crash). */
  missedFires: number;
  /**
   * The fires (newest first, at most 10, from the last 30 days) that fell while no host was
   * running, with that downtime: they did not run on time (one catch-up run at the next start,
   * or counted in `missedFires`). Absent when there are none.
   */
  firesWhileDown?: Array<{
    /** When the fire was due. */
    at: string;
    /** When the downtime around it began (the last host stopped). */
    downFrom: string;
    /** When it ended (the next host started). */
    downUntil: string;
  }>;
  /** The last thing that went wrong and when, kept after later fires succeed; the message follows `Accept-Language`. */
  lastError?: {
    /** The stable error code (e.g. `schedule_capacity_refused`, `schedule_claim_interrupted`). */
    code: string;
    /** The error in words. */
    message: string;
    /** When it happened. */
    at: string;
  };
  /** The task its latest fire submitted; absent before the first. */
  lastTaskId?: string;
  /** Whether it fires. */
  state: ScheduleState;
  /** Why it is `paused` (`sandbox_weakened`: created sandboxed, the host now runs plugins unsandboxed). */
  pausedReason?: string;
}
