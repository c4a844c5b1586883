import { performance } from 'node:perf_hooks';
import { isFengYuError, localize } from '@fengyu/protocol';
import { createHost, type Host } from '../http/server';
import { startIdleRelease } from './idle-release';
import { openInBrowser } from './open-browser';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export async function serveCommand(opts: { port?: number; home?: string; open?: boolean }): Promise<void> {
  const loaded = { at: performance.now(), cpu: cpuMs() };
  let host: Host;
  try {
    host = await createHost({ port: opts.port, home: opts.home });
  } catch (err) {
    // a start-up refusal with a code (a missing or wrong secrets key, …) is told in words, not as a stack
    if (!isFengYuError(err)) throw err;
    process.stderr.write(`fengyu: ${localize(err.code, err.params)}\n`);
    process.exitCode = 1;
    return;
  }
  // FENGYU_START_TRACE=1 (config.startTrace): where a start's time went since the process began (wall and CPU ms), on stderr
  if (host.ctx.config.startTrace) {
    process.stderr.write(`fengyu start: code loaded at ${loaded.at.toFixed(0)} ms (cpu ${loaded.cpu.toFixed(0)}), listening at ${performance.now().toFixed(0)} ms (cpu ${cpuMs().toFixed(0)})\n`);
  }
  // An idle host gives back the heap its last burst of work grew (idle-release.ts).
  const stopIdleRelease = startIdleRelease({ everyMs: host.ctx.config.idleReleaseTickMs });
  // Handlers first: a stop signal that arrives as soon as the address is printed is still a clean stop.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    stopIdleRelease();
    process.stdout.write(`\n${signal}: stopping…\n`);
    await host.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const posture = host.ctx.posture();
  process.stdout.write(
    [
      `FengYu is running at ${host.url}`,
      `Open the web UI: ${host.url}/#token=${host.token}`,
      `Data: ${host.ctx.config.home}   Plugins: ${posture.mode} (${posture.backend})`,
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );
  if (opts.open && !(await openInBrowser(`${host.url}/#token=${host.token}`, host.ctx.config.env))) {
    process.stdout.write('Could not open a browser here: open the address above yourself.\n');
  }
}
