import { describe, expect, it } from 'vitest';
import { hostErrorText, modeIdParts } from './host-error';

describe('host error text', () => {
  it('uses the table sentence in the UI language when it needs no parameters', () => {
    expect(hostErrorText({ code: 'task_cancelled', message: 'The task was killed.' }, 'zh-CN')).toBe('任务已被终止。');
    expect(hostErrorText({ code: 'unknown_code', message: 'as recorded' }, 'zh-CN')).toBe('as recorded');
  });

  it('marks the permission-mode identifiers of a guidance message', () => {
    const parts = modeIdParts('在“ask（每次询问）”模式下；选择“approve-for-me”或“full-access”。asked');
    expect(parts.filter((p) => p.code).map((p) => p.text)).toEqual(['ask', 'approve-for-me', 'full-access']);
    expect(parts.map((p) => p.text).join('')).toBe('在“ask（每次询问）”模式下；选择“approve-for-me”或“full-access”。asked');
  });
});
