import type { HostContext } from '../../context';
import type { Tool, ToolSource } from '../tool';
import { createExecuteCommandTool } from './execute-command';

/** The core's built-in tools (web tools register their own source in `web-tools.ts`). */
export function builtinSource(ctx: HostContext): ToolSource {
  const { FENGYU_TOKEN: _secret, ...env } = ctx.config.env;
  const tools: Tool[] = [createExecuteCommandTool({ home: ctx.config.home, env })];
  return { kind: 'builtin', list: async () => tools };
}
