import type { JsonSchema } from '@fengyu/protocol';
import type { FileGrant, Tool } from '../tools/tool';

/**
 * FileRef routing for model-driven calls. Route B: a tool with exactly one file-like
 * string parameter and exactly one matching grant gets the grant's path injected before the call
 * (a directory parameter needs a write or read-write grant). Route A: otherwise the available
 * grants are listed in the system prompt and the model fills paths in itself.
 */

export interface FileParam {
  name: string;
  kind: 'file' | 'directory';
}

const DIRECTORY_NAME = /(dir|directory|folder)(path|_path)?$/i;
const FILE_NAME = /(file|filepath|file_path|path)$/i;

/** The file-like string parameters of an input schema, in declaration order. */
export function fileParams(schema: JsonSchema): FileParam[] {
  const props = schema.properties;
  if (!props || typeof props !== 'object') return [];
  const out: FileParam[] = [];
  for (const [name, raw] of Object.entries(props as Record<string, unknown>)) {
    if (!raw || typeof raw !== 'object') continue;
    const p = raw as Record<string, unknown>;
    if (p.type !== undefined && p.type !== 'string') continue;
    if (p.format === 'fengyu-directory' || p['x-fengyu-auto'] === 'shared-directory' || DIRECTORY_NAME.test(name)) {
      out.push({ name, kind: 'directory' });
    } else if (p.format === 'fengyu-file' || FILE_NAME.test(name)) {
      out.push({ name, kind: 'file' });
    }
  }
  return out;
}

function matches(param: FileParam, grant: FileGrant): boolean {
  if (param.kind === 'file') return grant.kind === 'file';
  return grant.kind === 'directory' && (grant.access === 'write' || grant.access === 'read-write');
}

/** Route B target for a tool: its single file parameter and the single grant matching it. */
export function routeB(tool: Pick<Tool, 'inputSchema'>, grants: readonly FileGrant[]): { param: string; grant: FileGrant } | undefined {
  const params = fileParams(tool.inputSchema);
  if (params.length !== 1) return undefined;
  const param = params[0] as FileParam;
  const candidates = grants.filter((g) => matches(param, g));
  if (candidates.length !== 1) return undefined;
  return { param: param.name, grant: candidates[0] as FileGrant };
}

/** Arguments with the route-B path injected (a copy), or the arguments unchanged. */
export function injectFileArgument(tool: Pick<Tool, 'inputSchema'>, args: Record<string, unknown>, grants: readonly FileGrant[]): Record<string, unknown> {
  const target = routeB(tool, grants);
  if (!target) return args;
  return { ...args, [target.param]: target.grant.path };
}

/** Route A: the grants as a system-prompt section (empty string when there are none). */
export function fileRefsPrompt(grants: readonly FileGrant[]): string {
  if (grants.length === 0) return '';
  const lines = grants.map((g) => `- ${g.name}: ${g.kind}, ${g.access}, path ${JSON.stringify(g.path)}`);
  return [
    'Files and directories the user attached (pass the path as the file argument of a tool;',
    'for tools with a single file parameter the host fills it in for you):',
    ...lines,
  ].join('\n');
}
