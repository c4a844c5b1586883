/**
 * The worker wire protocol: newline-delimited JSON-RPC 2.0 over stdio, one message per line.
 * Shared by the SDK's worker runtime and (by value, not import) the host's process manager.
 *
 * host → worker   request        {"jsonrpc":"2.0","id":1,"method":"excel_analyze","params":{…}}
 * host → worker   notification   {"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}
 * worker → host   response       {"jsonrpc":"2.0","id":1,"result":{…}} | {"jsonrpc":"2.0","id":1,"error":{code,message,data?}}
 * worker → host   notification   {"jsonrpc":"2.0","method":"$/progress","params":{"id":1,"message?","current?","total?"}}
 * worker → host   notification   {"jsonrpc":"2.0","method":"$/log","params":{"level":"info","message":"…"}}
 * worker → host   request        {"jsonrpc":"2.0","id":"w1","method":"$/secrets/get","params":{"key":"account/work"}}
 * host → worker   response       {"jsonrpc":"2.0","id":"w1","result":{"value":"…"}}  (`{}` when none is stored)
 * worker → host   request        {"jsonrpc":"2.0","id":"w2","method":"$/secrets/set","params":{"key":"account/work","value":"…"|null}}
 *
 * The `$/secrets/*` requests reach the plugin's own values in the host's encrypted vault (a
 * plugin never sees another plugin's); worker-sent ids are strings, so they never meet the
 * host's integer ids.
 *
 * `$/describe` (request, no params) answers `{methods: {name: {description, inputSchema, outputSchema}}}`;
 * running a worker with the argument `--fengyu-describe` prints the same JSON on stdout and exits.
 */

export const CANCEL_METHOD = '$/cancelRequest';
export const PROGRESS_METHOD = '$/progress';
export const LOG_METHOD = '$/log';
export const DESCRIBE_METHOD = '$/describe';
export const DESCRIBE_FLAG = '--fengyu-describe';
export const SECRETS_GET_METHOD = '$/secrets/get';
export const SECRETS_SET_METHOD = '$/secrets/set';
/** A plugin's secret key: lower case letters, digits and `._/-`, 1..100 characters. */
export const PLUGIN_SECRET_KEY_RE = /^[a-z0-9][a-z0-9._/-]{0,99}$/;

/** JSON-RPC error codes used by workers. */
export const RpcErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The handler threw: the tool failed. */
  toolFailed: -32000,
  /** The request was cancelled by the host. */
  cancelled: -32800,
} as const;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcRequest {
  jsonrpc: '2.0';
  id?: number | string | null;
  method: string;
  params?: unknown;
}

export interface RpcResponse {
  jsonrpc: '2.0';
  id: number | string | null;
  result?: unknown;
  error?: RpcError;
}

export interface MethodDescription {
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

export interface Description {
  methods: Record<string, MethodDescription>;
}
