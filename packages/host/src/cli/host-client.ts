import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { loadConfig } from '../config/config';
import { createHost, type Host } from '../http/server';

/**
 * Finds the host the CLI talks to: a live host for the same FENGYU_HOME (via host.json), or
 * one started in-process for this command. Never two hosts writing one database.
 */
export interface HostHandle {
  url: string;
  token: string;
  close(): Promise<void>;
}

async function alive(url: string, token: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/api/health`, { headers: { 'x-fengyu-token': token }, signal: AbortSignal.timeout(1500) });
    return res.ok;
  } catch {
    return false;
  }
}

export async function connectHost(home?: string, own: { logger?: Logger } = {}): Promise<HostHandle> {
  const config = loadConfig({ home });
  const file = join(config.home, 'host.json');
  const tokenFile = join(config.home, 'token');
  if (existsSync(file) && (config.token || existsSync(tokenFile))) {
    const info = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number };
    const token = config.token ?? readFileSync(tokenFile, 'utf8').trim();
    if (await alive(info.url, token)) return { url: info.url, token, close: async () => {} };
  }
  const host: Host = await createHost({ home, port: 0, logLevel: 'warn', writeHostFile: false, ...(own.logger ? { logger: own.logger } : {}) });
  return { url: host.url, token: host.token, close: () => host.close() };
}

export async function call<T = unknown>(h: HostHandle, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${h.url}${path}`, {
    method,
    headers: { 'x-fengyu-token': h.token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const err = json?.error;
    const lines = [`${err?.code ?? res.status}: ${err?.message ?? text}`];
    for (const d of Array.isArray(err?.details) ? err.details : []) lines.push(`  - ${d.stepId ? `[${d.stepId}] ` : ''}${d.message ?? JSON.stringify(d)}`);
    throw new Error(lines.join('\n'));
  }
  return json as T;
}
