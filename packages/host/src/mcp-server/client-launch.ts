import type { McpClientLaunch } from '@fengyu/protocol';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

type StdioLaunch = McpClientLaunch['stdio'];

/**
 * The `fengyu` entry script of the checkout this host runs from (`bin/fengyu.mjs` above the
 * sources or the compiled host), or undefined when the host runs from elsewhere.
 */
export function findEntryScript(from: string, exists: (p: string) => boolean = existsSync): string | undefined {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'bin', 'fengyu.mjs');
    if (exists(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/**
 * The launch a client should copy: this host's own node and entry script by absolute path, so
 * the client never resolves a `fengyu` of its own working directory or a package registry
 * (`npx fengyu` would fetch whatever the registry holds under that name).
 */
export function stdioLaunch(home: string, entry: string | undefined, node: string): StdioLaunch {
  return entry ? { command: node, args: [entry, 'mcp'], env: { FENGYU_HOME: home } } : { command: 'fengyu', args: ['mcp'], env: { FENGYU_HOME: home } };
}
