import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

describe('loadConfig: the SSE heartbeat', () => {
  it('is 15 s unless set; FENGYU_SSE_HEARTBEAT_MS or the option sets it (the option first)', () => {
    expect(loadConfig({ env: {} }).sseHeartbeatMs).toBe(15_000);
    expect(loadConfig({ env: { FENGYU_SSE_HEARTBEAT_MS: '250' } }).sseHeartbeatMs).toBe(250);
    expect(loadConfig({ env: { FENGYU_SSE_HEARTBEAT_MS: '250' }, sseHeartbeatMs: 40 }).sseHeartbeatMs).toBe(40);
  });

  it('refuses a value that is not a whole number of ms between 10 and 600000', () => {
    for (const bad of ['abc', '5', '1.5', '600001']) expect(() => loadConfig({ env: { FENGYU_SSE_HEARTBEAT_MS: bad } }), bad).toThrow(/FENGYU_SSE_HEARTBEAT_MS/);
  });
});

describe('loadConfig: the idle-release tick', () => {
  it('is 1 s unless set; FENGYU_IDLE_RELEASE_TICK_MS sets it; below 200 ms (a settle spell shorter than V8 waits out) is refused', () => {
    expect(loadConfig({ env: {} }).idleReleaseTickMs).toBe(1000);
    expect(loadConfig({ env: { FENGYU_IDLE_RELEASE_TICK_MS: '200' } }).idleReleaseTickMs).toBe(200);
    for (const bad of ['199', 'x', '60001']) expect(() => loadConfig({ env: { FENGYU_IDLE_RELEASE_TICK_MS: bad } }), bad).toThrow(/FENGYU_IDLE_RELEASE_TICK_MS/);
  });
});

describe('loadConfig: the start trace', () => {
  it('is on only for FENGYU_START_TRACE=1; the option wins', () => {
    expect(loadConfig({ env: {} }).startTrace).toBe(false);
    expect(loadConfig({ env: { FENGYU_START_TRACE: '1' } }).startTrace).toBe(true);
    for (const off of ['0', 'true', '']) expect(loadConfig({ env: { FENGYU_START_TRACE: off } }).startTrace, off).toBe(false);
    expect(loadConfig({ env: { FENGYU_START_TRACE: '1' }, startTrace: false }).startTrace).toBe(false);
  });
});
