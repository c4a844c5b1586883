import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { systemResolver } from '../packages/host/src/net/safe-fetch';
import { findChromium } from '../packages/host/src/tools/browser/chromium';
import { BrowserSessions, browserEnv, CHROMIUM_ARGS } from '../packages/host/src/tools/browser/sessions';
import { createBrowserTools } from '../packages/host/src/tools/browser/tools';
import type { Tool, ToolContext } from '../packages/host/src/tools/tool';
import { startFixture } from '../packages/host/test/support/browser-fixture';
import { fmt, median, p99 } from './stats';

/**
 * The browser tools' overhead: browser_navigate + browser_snapshot on a local page (a document,
 * a stylesheet and an image, served on loopback) against raw playwright-core doing the same
 * (goto until load + an AI-mode aria snapshot) with the same Chromium in the same run. The two
 * are interleaved per iteration so drift hits both alike. Goal: median ratio ≤ 1.3×.
 */

const ITERATIONS = 40;
const WARMUP = 5;

export async function run(): Promise<string[]> {
  const found = findChromium({ override: process.env.FENGYU_CHROMIUM, path: process.env.PATH });
  if (!('path' in found)) return [`skipped: ${found.missing}`];
  const site = await startFixture();
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-browser-'));
  const sessions = new BrowserSessions({ executable: () => found, home, resolver: systemResolver, env: browserEnv(home, process.env) });
  const tools = new Map(
    createBrowserTools({ sessions, available: () => true, policy: async () => ({ allowPrivateNetwork: true }), files: { register: async () => ({ id: 'x', name: 'x', size: 0, sha256: '' }) } }).map((t) => [t.name, t]),
  );
  const ctx: ToolContext = { signal: new AbortController().signal, owner: 'bench', runId: 'bench', permissionMode: 'full-access', grants: [] };
  const raw = await chromium.launch({ executablePath: found.path, headless: true, args: CHROMIUM_ARGS.filter((a) => !a.startsWith('--proxy')) });
  const page = await (await raw.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const url = `${site.url}/`;
  const viaTools: number[] = [];
  const viaRaw: number[] = [];
  try {
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      let t0 = performance.now();
      await (tools.get('browser_navigate') as Tool).invoke({ url }, ctx);
      const snap = (await (tools.get('browser_snapshot') as Tool).invoke({}, ctx)) as { snapshot: string };
      const tTools = performance.now() - t0;
      t0 = performance.now();
      await page.goto(url, { waitUntil: 'load' });
      const rawSnap = await page.ariaSnapshot({ mode: 'ai' });
      const tRaw = performance.now() - t0;
      if (!snap.snapshot.includes('Fixture Home') || !rawSnap.includes('Fixture Home')) throw new Error('the page did not load');
      if (i >= WARMUP) {
        viaTools.push(tTools);
        viaRaw.push(tRaw);
      }
    }
  } finally {
    await raw.close();
    await sessions.closeAll();
    await site.close();
    rmSync(home, { recursive: true, force: true });
  }
  const ratio = median(viaTools) / median(viaRaw);
  return [
    `navigate + snapshot of a local page, ${ITERATIONS} iterations (after ${WARMUP} warm-up), interleaved`,
    `raw playwright-core   median ${fmt(median(viaRaw), 1)} ms   p99 ${fmt(p99(viaRaw), 1)} ms`,
    `browser_* tools       median ${fmt(median(viaTools), 1)} ms   p99 ${fmt(p99(viaTools), 1)} ms`,
    `ratio (tools / raw, medians) ${fmt(ratio, 2)}×   goal ≤ 1.30× ${ratio <= 1.3 ? 'met' : 'NOT met'}`,
  ];
}
