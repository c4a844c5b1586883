import { homedir } from 'node:os';
import { FengYuError } from '@fengyu/protocol';
import { z } from 'zod';
import type { CoreServices } from '../../services';
import { DEFAULT_OWNER } from '../../http/auth';
import { sandboxFor } from '../../plugins/sandbox';
import type { OwnerIsolation } from '../../process/owner-commands';
import { processGroupsFor } from '../../process/spawn';
import type { Tool, ToolSource } from '../tool';
import { createExecuteCommandTool } from './execute-command';

/**
 * The core's built-in tools (web tools register their own source in `web-tools.ts`), and the
 * `commands` settings section: `allowUnsandboxedOwners` (default false) lets other owners run
 * commands where bubblewrap is unavailable. Only the primary owner's value counts, and only the
 * primary owner may set it.
 */

const CommandsSection = z.object({ allowUnsandboxedOwners: z.boolean().default(false) }).strict();
type CommandsSettings = z.infer<typeof CommandsSection>;

export function builtinSource(ctx: Pick<CoreServices, 'config' | 'settings' | 'onClose' | 'crashPoint'>): ToolSource {
  ctx.settings.registerSection<CommandsSettings>('commands', {
    schema: CommandsSection as unknown as z.ZodType<CommandsSettings>,
    defaultValue: { allowUnsandboxedOwners: false },
    prepare: (next, prev, owner) => {
      if (owner !== DEFAULT_OWNER && next.allowUnsandboxedOwners !== prev.allowUnsandboxedOwners) {
        throw new FengYuError('forbidden', { reason: 'only the primary owner decides whether other owners may run unsandboxed commands (commands.allowUnsandboxedOwners)' });
      }
      return next;
    },
  });
  const tools: Tool[] = [
    createExecuteCommandTool({ home: ctx.config.home, env: ctx.config.env, groups: processGroupsFor(ctx.config, (fn) => ctx.onClose(fn)), isolation: hostOwnerIsolation(ctx), ...(ctx.crashPoint ? { crashPoint: ctx.crashPoint } : {}) }),
  ];
  return { kind: 'builtin', list: async () => tools, listNow: () => tools };
}

/** How this host isolates the commands of owners other than the primary one. */
export function hostOwnerIsolation(ctx: Pick<CoreServices, 'config' | 'settings'>): OwnerIsolation {
  const backend = sandboxFor(ctx.config);
  return {
    primaryOwner: DEFAULT_OWNER,
    bwrap: backend.bwrapPath ? { path: backend.bwrapPath, hardening: backend.hardening } : undefined,
    unavailableReason: backend.bwrapPath ? undefined : (backend.unavailable ?? (ctx.config.sandbox === 'off' ? 'the sandbox is turned off (FENGYU_SANDBOX=off)' : 'bubblewrap is not available')),
    userHome: ctx.config.env.HOME ?? homedir(),
    unsandboxedAllowed: async () => (await ctx.settings.section<CommandsSettings>(DEFAULT_OWNER, 'commands')).allowUnsandboxedOwners === true,
  };
}
