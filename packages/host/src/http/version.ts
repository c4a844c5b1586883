/** The host's version, as answered by /api/health and told to MCP clients. */
export const VERSION = '0.1.0';
