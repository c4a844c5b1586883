import { errorSpecOf, registerErrors } from '@fengyu/protocol';

/** Error codes of the schedules domain (messages in protocol/src/i18n/schedules.ts). */
export function registerScheduleErrors(): void {
  registerErrors({
    schedule_not_found: errorSpecOf(404),
    schedule_limit: errorSpecOf(400),
    schedule_workflow_draft: errorSpecOf(400),
    schedule_workflow_id_invalid: errorSpecOf(400),
    schedule_permission_mode_invalid: errorSpecOf(400),
    schedule_inputs_invalid: errorSpecOf(400),
    schedule_run_immediately_invalid: errorSpecOf(400),
    schedule_recurrence_invalid: errorSpecOf(400),
    schedule_field_unknown: errorSpecOf(400),
    schedule_time_invalid: errorSpecOf(400),
    schedule_time_zone_invalid: errorSpecOf(400),
    schedule_weekdays_invalid: errorSpecOf(400),
    schedule_day_invalid: errorSpecOf(400),
    schedule_seconds_invalid: errorSpecOf(400),
    schedule_recurring_invalid: errorSpecOf(400),
    schedule_recurring_conflict: errorSpecOf(400),
    schedule_count_invalid: errorSpecOf(400),
    schedule_from_invalid: errorSpecOf(400),
  });
}
