import { join, resolve } from 'node:path';
import pino from 'pino';
import { McpToolSource } from '../../src/mcp/mcp-source';
import { createSafeFetch } from '../../src/net/safe-fetch';
import { createWebTools } from '../../src/tools/builtin/web-tools';
import { FixedToolSource } from '../../src/tools/tool';
import { toolSourceContract } from './tool-source-contract';

/** The shared ToolSource contract run against the MCP source and a fixed source of built-ins (the web tools). */

const root = resolve(import.meta.dirname, '../../../..');
const everything = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

toolSourceContract('McpToolSource (server-everything over stdio)', {
  owner: 'o',
  make: async () => {
    const source = new McpToolSource({
      logger: pino({ level: 'silent' }),
      now: () => Date.now(),
      servers: async () => ({ everything: { command: process.execPath, args: [everything], env: {} } }),
    });
    return { source, close: () => source.close() };
  },
  sample: (tool) => (tool.name === 'everything__echo' ? { message: 'x' } : tool.name === 'everything__get-sum' ? { a: 1, b: 2 } : undefined),
});

toolSourceContract('FixedToolSource of the web built-ins (web_fetch, web_search)', {
  owner: 'o',
  make: async () => {
    const settings = {
      section: async <T>(_owner: string, name: string) =>
        (name === 'webFetch' ? { allowPrivateNetwork: false } : { provider: 'searxng', url: 'http://127.0.0.1:9/' }) as T,
    };
    return { source: new FixedToolSource(createWebTools({ settings, fetch: createSafeFetch() })) };
  },
  sample: (tool) => (tool.name === 'web_fetch' ? { url: 'https://example.com/' } : { query: 'x' }),
});
