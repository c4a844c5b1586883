import { localize } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { hostErrorText, modeIdParts } from './host-error';

describe('host error text', () => {
  it('uses the table sentence in the UI language when it needs no parameters', () => {
    expect(hostErrorText({ code: 'task_cancelled', message: 'The task was killed.' }, 'zh-CN')).toBe('任务已被终止。');
    expect(hostErrorText({ code: 'unknown_code', message: 'as recorded' }, 'zh-CN')).toBe('as recorded');
  });

  it('says an error that needs parameters in the UI language with them, never as its bare code', () => {
    const params = { field: 'priority', allowed: 'interactive, normal, batch' };
    const recorded = { code: 'task_field_invalid', message: localize('task_field_invalid', params, 'en') };
    expect(hostErrorText(recorded, 'en')).toBe(recorded.message);
    expect(hostErrorText(recorded, 'zh-CN')).toBe(localize('task_field_invalid', params, 'zh-CN'));
    expect(hostErrorText(recorded, 'zh-CN')).toContain('interactive, normal, batch');
    // a task recorded before messages were written out: a sentence, not the code nor a raw {x}
    const bare = hostErrorText({ code: 'task_field_invalid', message: 'task_field_invalid' }, 'zh-CN');
    expect(bare).not.toContain('task_field_invalid');
    expect(bare).not.toMatch(/\{\w+\}/);
    // a tool's own words stay as written
    expect(hostErrorText({ code: 'tool_failed', message: 'disk full' }, 'zh-CN')).toBe('disk full');
  });

  it('marks the permission-mode identifiers of a guidance message', () => {
    const parts = modeIdParts('在“ask（每次询问）”模式下；选择“approve-for-me”或“full-access”。asked');
    expect(parts.filter((p) => p.code).map((p) => p.text)).toEqual(['ask', 'approve-for-me', 'full-access']);
    expect(parts.map((p) => p.text).join('')).toBe('在“ask（每次询问）”模式下；选择“approve-for-me”或“full-access”。asked');
  });
});
