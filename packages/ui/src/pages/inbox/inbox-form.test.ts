import type { InboxItem } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { applyFrame } from '../../app/inbox.store';
import { formFields, formValues } from './inbox-form';

const form = {
  type: 'object',
  required: ['discount', 'who'],
  properties: {
    discount: { type: 'integer', title: 'Discount %' },
    who: { type: 'string', format: 'email' },
    region: { type: 'string', enum: ['north', 'south'] },
    urgent: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    note: { type: 'string' },
  },
};

describe('an input form', () => {
  it('becomes one field per property with its kind, title and required mark', () => {
    const fields = formFields(form);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['discount', 'integer', true],
      ['who', 'email', true],
      ['region', 'enum', false],
      ['urgent', 'boolean', false],
      ['tags', 'list', false],
      ['note', 'text', false],
    ]);
    expect(fields[0]?.title).toBe('Discount %');
    expect(fields[2]?.options).toEqual(['north', 'south']);
  });

  it('turns typed text back into JSON of the form types; empty optional fields are left out', () => {
    const fields = formFields(form);
    expect(formValues(fields, { discount: '15', who: ' a@b.c ', region: 'south', urgent: true, tags: 'x, y,,', note: '' })).toEqual({ discount: 15, who: 'a@b.c', region: 'south', urgent: true, tags: ['x', 'y'] });
    // a required field left empty is sent empty: the host names it (400 listing every field)
    expect(formValues(fields, { discount: '', who: '' })).toMatchObject({ discount: '', who: '', urgent: false });
  });
});

describe('the inbox stream', () => {
  const item = (id: string) => ({ id, kind: 'step_approval', runId: 'r', title: id, trigger: 'task', createdAt: '2026-01-01T00:00:00.000Z' }) as InboxItem;
  it('adds each item once and removes by id', () => {
    const one = applyFrame([], 'inbox_added', { item: item('a') });
    expect(applyFrame(one, 'inbox_added', { item: item('a') })).toHaveLength(1);
    const two = applyFrame(one, 'inbox_added', { item: item('b') });
    expect(two.map((i) => i.id)).toEqual(['a', 'b']);
    expect(applyFrame(two, 'inbox_removed', { id: 'a', outcome: 'answered' }).map((i) => i.id)).toEqual(['b']);
  });
});
