import { describe, expect, it } from 'vitest';
import { calendarStrip } from './calendar-strip';
import { defaultForm, formFieldOf, formOf, validateForm } from './schedule-form';
import type { ScheduleView } from '@fengyu/protocol';

const schema = { type: 'object', required: ['who'], properties: { who: { type: 'string', maxLength: 5 }, count: { type: 'integer' } } };
const ready = () => ({ ...defaultForm('Europe/Berlin'), workflowId: 'wf', permissionMode: 'full-access' as const, inputsText: '{"who":"ann"}' });

describe('schedule form', () => {
  it('defaults to daily at 09:00 in the browser zone with no permission mode chosen', () => {
    const f = defaultForm('Asia/Shanghai');
    expect(f).toMatchObject({ kind: 'daily', time: '09:00', timeZone: 'Asia/Shanghai', permissionMode: '' });
    expect(validateForm({ ...f, workflowId: 'wf' }, undefined).errors.permissionMode).toEqual({ key: 'permissionMode' });
  });

  it('builds each recurrence the host accepts', () => {
    expect(validateForm(ready(), schema).body).toEqual({ workflowId: 'wf', inputs: { who: 'ann' }, permissionMode: 'full-access', runImmediately: false, recurrence: { kind: 'daily', time: '09:00', timeZone: 'Europe/Berlin' } });
    expect(validateForm({ ...ready(), kind: 'weekly', weekdays: [5, 1, 5] }, schema).body?.recurrence).toEqual({ kind: 'weekly', time: '09:00', timeZone: 'Europe/Berlin', weekdays: [1, 5] });
    expect(validateForm({ ...ready(), kind: 'monthly', day: 'last' }, schema).body?.recurrence).toEqual({ kind: 'monthly', time: '09:00', timeZone: 'Europe/Berlin', day: 'last' });
    expect(validateForm({ ...ready(), kind: 'interval', amount: 2, unit: 'hours' }, schema).body?.recurrence).toEqual({ kind: 'interval', everySeconds: 7200 });
    expect(validateForm({ ...ready(), kind: 'once', amount: 5, unit: 'minutes' }, schema).body?.recurrence).toEqual({ kind: 'once', delaySeconds: 300 });
  });

  it('names every bad field at once and sends nothing', () => {
    const bad = validateForm({ ...ready(), kind: 'weekly', weekdays: [], time: '25:00', timeZone: 'Mars/Olympus', workflowId: '' }, schema);
    expect(bad.body).toBeUndefined();
    expect(Object.keys(bad.errors).sort()).toEqual(['time', 'timeZone', 'weekdays', 'workflowId']);
    expect(validateForm({ ...ready(), kind: 'interval', amount: 0 }, schema).errors.amount).toEqual({ key: 'amount' });
    expect(validateForm({ ...ready(), kind: 'interval', amount: 1.5, unit: 'minutes' }, schema).errors.amount).toEqual({ key: 'amount' });
  });

  it('checks JSON inputs against the input schema, naming the field', () => {
    expect(validateForm({ ...ready(), inputsText: '{"who":' }, schema).errors.inputs?.key).toBe('jsonInvalid');
    expect(validateForm({ ...ready(), inputsText: '[1]' }, schema).errors.inputs).toEqual({ key: 'jsonNotObject' });
    expect(validateForm({ ...ready(), inputsText: '{}' }, schema).errors['inputs.who']).toEqual({ key: 'inputMissing', params: { field: 'who' } });
    expect(validateForm({ ...ready(), inputsText: '{"who":"ann","count":"two"}' }, schema).errors['inputs.count']).toEqual({ key: 'inputType', params: { field: 'count', expected: 'integer' } });
    expect(validateForm({ ...ready(), inputsText: '{"who":"too long"}' }, schema).errors['inputs.who']).toEqual({ key: 'inputInvalid', params: { field: 'who' } });
  });

  it('reads an existing schedule back into the form', () => {
    const s = { id: 's', workflowId: 'wf', permissionMode: 'approve-for-me', inputs: { who: 'x' }, recurrence: { kind: 'interval', everySeconds: 5400 } } as unknown as ScheduleView;
    expect(formOf(s, 'UTC')).toMatchObject({ kind: 'interval', amount: 90, unit: 'minutes', permissionMode: 'approve-for-me' });
    const m = { ...s, recurrence: { kind: 'monthly', time: '07:30', timeZone: 'Asia/Tokyo', day: 'last' } } as ScheduleView;
    expect(validateForm(formOf(m, 'UTC'), undefined).body?.recurrence).toEqual(m.recurrence);
  });

  it('maps the host’s problem fields onto the form', () => {
    expect(formFieldOf('recurrence.time')).toBe('time');
    expect(formFieldOf('recurrence.everySeconds')).toBe('amount');
    expect(formFieldOf('inputs.who')).toBe('inputs.who');
    expect(formFieldOf('permissionMode')).toBe('permissionMode');
    expect(formFieldOf(undefined)).toBe('form');
  });
});

describe('calendar strip', () => {
  it('starts on the Monday of this week in the zone and places fires on their local day', () => {
    // Wednesday 2026-03-04 23:30 UTC is already Thursday 07:30 in Shanghai
    const now = Date.parse('2026-03-04T23:30:00Z');
    const days = calendarStrip(['2026-03-05T01:00:00Z', '2026-03-06T01:00:00Z', '2026-03-06T09:00:00Z'], 'Asia/Shanghai', now, 1);
    expect(days.map((d) => d.date)).toEqual(['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08']);
    expect(days.find((d) => d.today)?.date).toBe('2026-03-05');
    expect(days[3]?.fires).toEqual(['09:00']);
    expect(days[4]?.fires).toEqual(['09:00', '17:00']);
    expect(days.filter((d) => d.past).length).toBe(3);
  });

  it('keeps whole days across a daylight-saving change', () => {
    const days = calendarStrip(['2026-03-29T07:00:00Z'], 'Europe/Berlin', Date.parse('2026-03-27T12:00:00Z'), 2);
    expect(days).toHaveLength(14);
    expect(new Set(days.map((d) => d.date)).size).toBe(14);
    expect(days.find((d) => d.fires.length)?.date).toBe('2026-03-29');
    expect(days.find((d) => d.fires.length)?.fires).toEqual(['09:00']);
  });
});
