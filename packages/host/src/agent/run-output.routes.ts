import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { errorSpecOf, FengYuError, registerErrors } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import type { HostContext } from '../context';
import { resolveInside } from '../files/grant-paths';
import { typedRoutes } from '../http/route-types';
import { parsePlan, type RunRepository } from './run.repository';
import { pluginReporting } from './run-output-origin';

/**
 * `GET /api/agent/runs/{runId}/output-file?path=` — a file a run wrote into one of its folders
 * created per run (`$FENGYU_HOME/runs/<runId>/shared/…`, e.g. the parts a Split wrote), as a
 * download, for the run's owner only. The path is resolved (symbolic links followed) and must be
 * a regular file inside that run's own folders; anything else — another owner's run, another
 * run's folder, a path outside, a directory, a missing file — is the same 404, so nothing about
 * other files leaks. Sent as an attachment, never rendered by the browser.
 * Also a file a plugin's own done step of this run reported writing (the e-mail outbox's `.eml`
 * files), when it resolves inside that plugin's data folder (run-output-origin.ts).
 */

registerErrors({ run_output_not_found: errorSpecOf(404) });

export function registerRunOutputRoute(ctx: HostContext, app: FastifyInstance, repo: RunRepository): void {
  const api = typedRoutes(app);
  /** The real path of a file a plugin's step of the run reported, inside that plugin's data folder. */
  async function reportedByPlugin(runId: string, owner: string, path: string): Promise<string | undefined> {
    const row = await repo.get(runId);
    if (!row) return undefined;
    const [steps, catalog] = await Promise.all([repo.steps(runId), ctx.catalog.snapshot(owner)]);
    const pluginOf = (tool: string) => {
      const t = catalog.get(tool);
      return t?.source === 'plugin' ? t.origin : undefined;
    };
    const plugin = pluginReporting(parsePlan(row), steps, pluginOf, path);
    // the data folder of this owner's worker of that plugin (each owner has its own)
    return plugin ? resolveInside(ctx.plugins.service.dataDirOf(plugin, owner), path) : undefined;
  }
  api.get(
    '/api/agent/runs/:runId/output-file',
    {
      schema: {
        summary: 'Download a file the run wrote into its folders created per run (owner only)',
        tags: ['agent'],
        params: { type: 'object', required: ['runId'], properties: { runId: { type: 'string', minLength: 1, maxLength: 200 } } } as const,
        querystring: { type: 'object', required: ['path'], properties: { path: { type: 'string', minLength: 1, maxLength: 4096 } } } as const,
      },
    },
    async (req, reply) => {
      const { runId } = req.params;
      const path = req.query.path;
      const owner = ctx.agent.ownerOf(runId) ?? (await repo.ownerOf(runId));
      if (owner !== req.owner) throw new FengYuError('run_not_found', { runId });
      const notFound = () => new FengYuError('run_output_not_found', { path });
      // the one containment check: after `..` and every symlink, still inside the run's folders
      const file = resolveInside(join(ctx.config.home, 'runs', runId, 'shared'), path) ?? (await reportedByPlugin(runId, owner, path));
      if (!file) throw notFound();
      const info = await stat(file).catch(() => undefined);
      if (!info?.isFile()) throw notFound();
      const name = file.split(sep).pop() ?? 'file';
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(info.size))
        .header('content-disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`)
        .header('x-content-type-options', 'nosniff')
        .send(createReadStream(file));
    },
  );
}
