/**
 * The worker wire protocol: newline-delimited JSON-RPC 2.0 over stdio, one message per line.
 * Shared by the SDK's worker runtime and (by value, not import) the host's process manager.
 *
 * host → worker   request        {"jsonrpc":"2.0","id":1,"method":"excel_analyze","params":{…}}
 * host → worker   notification   {"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}
 * worker → host   response       {"jsonrpc":"2.0","id":1,"result":{…}} | {"jsonrpc":"2.0","id":1,"error":{code,message,data?}}
 * worker → host   notification   {"jsonrpc":"2.0","method":"$/progress","params":{"id":1,"message?","current?","total?"}}
 * worker → host   notification   {"jsonrpc":"2.0","method":"$/log","params":{"level":"info","message":"…"}}
 *
 * `$/describe` (request, no params) answers `{methods: {name: {description, inputSchema, outputSchema}}}`;
 * running a worker with the argument `--fengyu-describe` prints the same JSON on stdout and exits.
 */

export const CANCEL_METHOD = '$/cancelRequest';
export const PROGRESS_METHOD = '$/progress';
export const LOG_METHOD = '$/log';
export const DESCRIBE_METHOD = '$/describe';
export const DESCRIBE_FLAG = '--fengyu-describe';

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
