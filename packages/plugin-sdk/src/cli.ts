import { isFengYuError, localize } from '@fengyu/protocol';
import { packPlugin } from './pack';

/** `fengyu-plugin pack <dir> [--out file.fyp] [--entry src/worker.ts]` */
export async function main(argv: string[]): Promise<number> {
  const [command, dir, ...rest] = argv;
  if (command !== 'pack' || !dir) {
    process.stderr.write('usage: fengyu-plugin pack <dir> [--out <file.fyp>] [--entry <src/worker.ts>]\n');
    return 2;
  }
  const flag = (name: string) => {
    const i = rest.indexOf(name);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  try {
    const { file, manifest } = await packPlugin(dir, flag('--out'), { entry: flag('--entry') });
    process.stdout.write(`packed ${manifest.id} ${manifest.version} → ${file}\n`);
    return 0;
  } catch (e) {
    if (!isFengYuError(e)) throw e;
    process.stderr.write(`${localize(e.code, e.params)}\n`);
    for (const p of (Array.isArray(e.details) ? e.details : []) as Array<{ code: string; params?: Record<string, unknown>; field?: string }>) {
      process.stderr.write(`  - ${p.field ? `${p.field}: ` : ''}${localize(p.code, p.params ?? {})}\n`);
    }
    return 1;
  }
}
