import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/client';
import { errorMessage } from './error-message';

describe('errorMessage', () => {
  const t = (k: string) => `T(${k})`;
  it('translates the unreachable case and keeps the host’s localized message otherwise', () => {
    expect(errorMessage(new ApiError(0, 'host_unreachable', 'The FengYu host cannot be reached.'), t)).toBe('T(common.banner.unreachable)');
    expect(errorMessage(new ApiError(409, 'no_pending_gate', '没有待批准的关卡'), t)).toBe('没有待批准的关卡');
    expect(errorMessage(new Error('boom'), t)).toBe('boom');
    expect(errorMessage('plain', t)).toBe('plain');
  });
});
