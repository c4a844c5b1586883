/**
 * A real host in its own process, with the test tools, for crash tests:
 *   node --import tsx serve-fixture.ts <home>
 * Prints one JSON line {url, token} once listening. The host reads its configuration from the
 * environment the test passes (e.g. FENGYU_CRASH_AT=webhook-claim makes it SIGKILL itself
 * right after a webhook delivery's claim is written, inside its group transaction on SQLite).
 */
import { createHost } from '../../src/http/server';
import { createTestTools } from './test-tools';

const home = process.argv[2] as string;
const tools = createTestTools();
const host = await createHost({ home, port: 0, logLevel: 'silent', sandbox: 'off', bundledPluginDirs: [], beforeDomains: (ctx) => ctx.catalog.register(tools.source) });
process.stdout.write(`${JSON.stringify({ url: host.url, token: host.token })}\n`);
