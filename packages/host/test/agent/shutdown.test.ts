import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A host stopped while a step's permission check is still running: the step must not start its
 * call afterwards, and nothing may reject unhandled (the process would log it or, under
 * --unhandled-rejections=strict, die).
 */
let t: TestHost;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  t = await startTestHost();
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('shutdown during a permission check', () => {
  it('never starts the tool call afterwards, and leaves no unhandled rejection', async () => {
    // The hook marks that it runs, then keeps the check open for a second: the host is stopped
    // once the mark is seen (the check is running then, however loaded the machine).
    const mark = join(mkdtempSync(join(tmpdir(), 'fy-shutdown-')), 'started');
    const hook = await t.api('PATCH', '/api/settings', { hooks: [{ name: 'slow-check', event: 'pre_tool_use', matcher: 'slow', type: 'command', command: `touch '${mark}'; sleep 1; exit 0`, timeoutSeconds: 5 }] });
    expect(hook.status).toBe(200);
    const res = await t.api('POST', '/api/agent/run', { config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 's', tool: 'slow', arguments: { ms: 1 } }] } });
    expect(res.status).toBe(200);
    for (let i = 0; i < 500 && !existsSync(mark); i++) await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(mark)).toBe(true);
    await t.close();
    await new Promise((r) => setTimeout(r, 1200)); // past the hook's end: a late start would show here
    expect(t.tools.calls.get('slow') ?? 0).toBe(0);
    expect(unhandled).toEqual([]);
  });
});
