import { describe, expect, it } from 'vitest';
import { newRunId } from '../../src/agent/run-id';
import { auto, startTestHost } from '../support/host';

/** Run ids are version 7 UUIDs: creation time first (ids sort in creation order), then random bits. */

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const timeOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('newRunId', () => {
  it('is a version 7 UUID carrying the creation time in milliseconds', () => {
    const at = Date.UTC(2026, 11, 4, 9, 0, 0, 123);
    const id = newRunId(at);
    expect(id).toMatch(V7);
    expect(timeOf(id)).toBe(at);
    expect(timeOf(newRunId(0))).toBe(0);
    expect(newRunId(-5)).toMatch(V7);
    expect(newRunId(2 ** 48 + 7)).toMatch(V7);
  });

  it('sorts in creation order across milliseconds, and never repeats within one', () => {
    const ids = [1, 2, 15, 16, 255, 256, 2 ** 32, 2 ** 40, 1_800_000_000_000].map(newRunId);
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 10_000 }, () => newRunId(1_800_000_000_000)));
    expect(same.size).toBe(10_000);
  });

  it('names the runs the host creates, in creation order', async () => {
    const t = await startTestHost();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: i } }] }, config: auto });
        expect(res.status).toBe(200);
        ids.push(res.body.runId);
        await new Promise((r) => setTimeout(r, 2));
      }
      for (const id of ids) expect(id).toMatch(V7);
      expect([...ids].sort()).toEqual(ids);
      const got = (await t.api('GET', `/api/agent/runs/${ids[0]}`)).body;
      expect(Math.abs(timeOf(ids[0] as string) - Date.parse(got.createdAt))).toBeLessThan(1000);
    } finally {
      await t.close();
    }
  });
});
