import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { connectHost } from './host-client';

/** `fengyu plugin pack <dir>` and `fengyu plugin install <file.fyp>`. */

export async function packCommand(dir: string, opts: { out?: string }): Promise<number> {
  try {
    const { packPlugin } = await import('@fengyu/plugin-sdk/pack');
    const { file, manifest } = await packPlugin(dir, opts.out);
    process.stdout.write(`Packed ${manifest.id} ${manifest.version} → ${file}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${describe(err)}\n`);
    return 1;
  }
}

export async function installCommand(file: string, opts: { home?: string }): Promise<number> {
  const h = await connectHost(opts.home);
  try {
    const form = new FormData();
    form.append('file', new Blob([readFileSync(file)], { type: 'application/zip' }), basename(file));
    const res = await fetch(`${h.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': h.token }, body: form });
    const body = (await res.json()) as { id?: string; version?: string; error?: { code: string; message: string; details?: Array<{ message?: string }> } };
    if (!res.ok) {
      process.stderr.write(`${body.error?.code}: ${body.error?.message}\n${(body.error?.details ?? []).map((d) => `  - ${d.message ?? JSON.stringify(d)}`).join('\n')}\n`);
      return 1;
    }
    process.stdout.write(`Installed ${body.id ?? file} ${body.version ?? ''}\n`);
    return 0;
  } finally {
    await h.close();
  }
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; details?: Array<{ message?: string; code?: string }> };
  const lines = [e.code ? `${e.code}: ${e.message}` : String(e.message ?? err)];
  for (const d of e.details ?? []) lines.push(`  - ${d.message ?? d.code}`);
  return lines.join('\n');
}
