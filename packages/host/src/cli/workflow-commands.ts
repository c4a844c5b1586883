import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportFileName, type ImportResult, stableJson, type WorkflowExport } from '@fengyu/protocol';
import { call, connectHost, type HostHandle } from './host-client';

/**
 * `fengyu workflows export|import`: workflow documents as files. `export --all --dir` writes one
 * stable file per workflow (keys sorted, named by slug and id), and leaves a file untouched when
 * only its `exportedAt` would change, so a folder kept in Git shows real changes only.
 */

async function withHost<T>(home: string | undefined, fn: (h: HostHandle) => Promise<T>): Promise<T> {
  const h = await connectHost(home);
  try {
    return await fn(h);
  } finally {
    await h.close();
  }
}

function fail(err: unknown): number {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

/** Writes `doc` to `file` unless the file already holds it (apart from `exportedAt`); true when written. */
export function writeStable(file: string, doc: WorkflowExport): boolean {
  if (existsSync(file)) {
    try {
      const old = JSON.parse(readFileSync(file, 'utf8')) as WorkflowExport;
      if (stableJson({ ...old, exportedAt: '' }) === stableJson({ ...doc, exportedAt: '' })) return false;
    } catch {
      // not a document we wrote: overwrite it
    }
  }
  writeFileSync(file, stableJson(doc));
  return true;
}

export async function exportCommand(id: string | undefined, opts: { out?: string; all?: boolean; dir?: string; home?: string }): Promise<number> {
  try {
    return await withHost(opts.home, async (h) => {
      if (opts.all) {
        if (!opts.dir) throw new Error('--all needs --dir <dir>: the folder to write one file per workflow into');
        mkdirSync(opts.dir, { recursive: true });
        const { workflows } = await call<{ workflows: Array<{ id: string; name: string }> }>(h, 'GET', '/api/workflows');
        let written = 0;
        for (const w of workflows) {
          const doc = await call<WorkflowExport>(h, 'GET', `/api/workflows/${encodeURIComponent(w.id)}/export`);
          const file = join(opts.dir, exportFileName(doc.name, w.id));
          if (writeStable(file, doc)) written += 1;
        }
        process.stdout.write(`${workflows.length} workflow(s) exported to ${opts.dir} (${written} file(s) changed)\n`);
        return 0;
      }
      if (!id) throw new Error('name the workflow to export (fengyu workflows export <id>), or use --all --dir <dir>');
      const doc = await call<WorkflowExport>(h, 'GET', `/api/workflows/${encodeURIComponent(id)}/export`);
      if (opts.out) {
        writeFileSync(opts.out, stableJson(doc));
        process.stdout.write(`exported "${doc.name}" to ${opts.out}\n`);
      } else process.stdout.write(stableJson(doc));
      return 0;
    });
  } catch (err) {
    return fail(err);
  }
}

export async function importCommand(file: string, opts: { home?: string }): Promise<number> {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return fail(new Error(`${file} is not a readable JSON file: ${err instanceof Error ? err.message : String(err)}`));
  }
  try {
    return await withHost(opts.home, async (h) => {
      const r = await call<ImportResult>(h, 'POST', '/api/workflows/import', doc);
      process.stdout.write(`imported "${r.name}" as draft ${r.id}\n`);
      for (const w of r.warnings) process.stdout.write(`  warning: ${w.code === 'import_tool_missing' ? 'tool' : 'secret'} "${w.name}" is missing here\n`);
      return 0;
    });
  } catch (err) {
    return fail(err);
  }
}
