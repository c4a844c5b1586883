/**
 * A real host in its own process for the schedule restart tests:
 *   node --import tsx schedule-fixture.ts <home> <clockOffsetMs> [sandbox]
 * The host's clock runs `clockOffsetMs` ahead of the wall clock (so a test can "be down" across
 * interval boundaries without waiting for them). `FENGYU_CRASH_AT` in the environment
 * makes the host kill itself at that point of a fire. Prints one JSON line
 * {url, token, readyAt} once listening (`readyAt` by the host's clock).
 */
import { createHost } from '../../src/http/server';
import { createTestTools } from '../support/test-tools';

const home = process.argv[2] as string;
const offset = Number(process.argv[3] ?? 0);
const sandbox = (process.argv[4] ?? 'off') as 'off' | 'auto';
const clock = { now: () => Date.now() + offset };
const tools = createTestTools();
const host = await createHost({ home, port: 0, logLevel: 'silent', sandbox, bundledPluginDirs: [], clock, beforeDomains: (ctx) => ctx.catalog.register(tools.source) });
process.stdout.write(`${JSON.stringify({ url: host.url, token: host.token, readyAt: clock.now(), posture: host.ctx.posture() })}\n`);
