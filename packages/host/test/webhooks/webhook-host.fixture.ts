/**
 * A real host in its own process for the webhook crash tests:
 *   node --import tsx webhook-host.fixture.ts <home>
 * Prints one JSON line {url, token} once listening. FENGYU_TEST_WEBHOOK_CRASH_AFTER_CLAIM=1
 * makes the host SIGKILL itself right after a delivery's claim is committed.
 */
import { createHost } from '../../src/http/server';
import { createTestTools } from '../support/test-tools';

const home = process.argv[2] as string;
const tools = createTestTools();
const host = await createHost({
  home,
  port: 0,
  logLevel: 'silent',
  sandbox: 'off',
  bundledPluginDirs: [],
  beforeDomains: (ctx) => ctx.catalog.register(tools.source),
});
process.stdout.write(`${JSON.stringify({ url: host.url, token: host.token })}\n`);
