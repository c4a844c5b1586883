import { spawn } from 'node:child_process';

/**
 * Opens a URL in the person's default browser: `$BROWSER` when set (the convention shared by
 * xdg-utils, git and Python's webbrowser), else the platform's opener. The URL is one argument,
 * never part of a shell string. `env` is the host's configured environment (`HostConfig.env`), which
 * the opener inherits: it needs the person's session (DISPLAY, DBUS, …). Resolves false when no
 * opener could be started.
 */
export function openInBrowser(url: string, env: Readonly<Record<string, string | undefined>>, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const [command, args] = openerFor(url, env, platform);
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { detached: true, stdio: 'ignore', env: { ...env } });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}

function openerFor(url: string, env: Readonly<Record<string, string | undefined>>, platform: NodeJS.Platform): [string, string[]] {
  const chosen = env.BROWSER?.split(':')[0]?.trim();
  if (chosen) return [chosen, [url]];
  if (platform === 'darwin') return ['open', [url]];
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}
