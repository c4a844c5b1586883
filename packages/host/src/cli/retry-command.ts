import type { RetryPreview } from '../agent/agent.service';
import { call, connectHost } from './host-client';

/**
 * `fengyu retry <runId> [--current]`: retries a failed or interrupted run from its failed step
 * (`POST /api/agent/runs/{runId}/retry`), in the run's own version or, with `--current`, its
 * workflow's latest published one. Prints which steps are reused and which run again, then the
 * new run's id; exit 1 with the host's message when the retry is refused.
 */
export async function retryCommand(runId: string, opts: { home?: string; current?: boolean }): Promise<number> {
  try {
    const h = await connectHost(opts.home);
    try {
      const body = { version: opts.current ? 'current' : 'original' };
      const path = `/api/agent/runs/${encodeURIComponent(runId)}/retry`;
      const preview = await call<RetryPreview>(h, 'POST', `${path}/preview`, body);
      const { runId: newRunId } = await call<{ runId: string }>(h, 'POST', path, body);
      const version = preview.workflowVersion !== undefined ? ` (workflow version ${preview.workflowVersion})` : '';
      process.stdout.write(`reused: ${preview.reused.join(', ') || '-'}\nrun again: ${preview.rerun.join(', ') || '-'}${version}\n${newRunId}\n`);
      return 0;
    } finally {
      await h.close();
    }
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
