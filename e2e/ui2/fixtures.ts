import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packPlugin } from '../../packages/plugin-sdk/src/pack';
import type { TestHost } from '../../packages/host/test/support/host';
import { ROOT } from './build-ui';

/** The example plugin packed as a .fyp, with a hooks file added so the trust switch shows. */
export async function packHelloWithHooks(work: string): Promise<string> {
  const src = join(work, 'hello');
  cpSync(join(ROOT, 'examples/hello-plugin'), src, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(src, 'manifest.json'), 'utf8'));
  manifest.hooks = 'hooks/hooks.json';
  writeFileSync(join(src, 'manifest.json'), JSON.stringify(manifest, null, 2));
  mkdirSync(join(src, 'hooks'), { recursive: true });
  writeFileSync(join(src, 'hooks/hooks.json'), JSON.stringify([{ name: 'log-calls', event: 'post_tool_use', matcher: 'hello_*', type: 'command', command: 'true' }]));
  return (await packPlugin(src, join(work, 'hello.fyp'))).file;
}

/** Installs a .fyp through the real multipart route. */
export async function installPlugin(t: TestHost, file: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([readFileSync(file)]), 'hello.fyp');
  const res = await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
  if (!res.ok) throw new Error(`install failed: ${res.status} ${await res.text()}`);
}
