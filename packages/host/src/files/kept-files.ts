import { existsSync } from 'node:fs';
import { FengYuError, type InputContract, type JsonSchema, type Problem } from '@fengyu/protocol';
import type { TaskFile } from '../tasks/task.store';
import type { FileRepository } from './file.repository';
import '../plugins/plugin-errors';
import './kept-files.errors';

/**
 * The `files` of a background task or a schedule (`[{name, refs: [FileRef id | {id}]}]`), checked
 * at submission, before anything is queued or saved: each entry names one of the workflow's file
 * inputs and refers only to the owner's existing uploads (all problems together, `invalid_files`);
 * then every required file input must have an entry (`input_file_missing`, naming the first such
 * input by its title). Host paths and shared directories are not accepted here: an unattended run
 * is granted uploads only, and its shared directories are created per run.
 */
/** The `files` argument of the model's tools that start or schedule a run (`task_submit_workflow`, `task_schedule`); `more` ends its description. */
export const keptFilesSchema = (more = ''): JsonSchema => ({
  type: 'array',
  maxItems: 64,
  description: `Uploads for the workflow's file inputs: [{name: the file input's name, refs: [{id: an uploaded file's id}]}]. Give one entry for each required file input; host paths and folders are not accepted.${more}`,
  items: {
    type: 'object',
    required: ['name', 'refs'],
    properties: {
      name: { type: 'string', minLength: 1, description: 'The name of one of the workflow\'s file inputs.' },
      refs: { type: 'array', minItems: 1, maxItems: 64, items: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1 } } } },
    },
  },
});

export async function checkKeptFiles(repo: Pick<FileRepository, 'get'>, owner: string, files: unknown, contract: InputContract): Promise<TaskFile[]> {
  if (files === undefined || files === null) return missingCheck([], contract);
  if (!Array.isArray(files)) throw new FengYuError('invalid_files', { count: 1 }, [{ code: 'files_bad_entry', field: 'files', params: { name: '(files)' } }]);
  const problems: Problem[] = [];
  const out: TaskFile[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of files.entries()) {
    const entry = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const name = typeof entry.name === 'string' ? entry.name : `#${i}`;
    const field = `files[${i}]`;
    if (!contract.files.includes(name)) {
      problems.push({ code: 'files_not_file_input', field, params: { name, inputs: contract.files.join(', ') || '—' } });
      continue;
    }
    if (seen.has(name)) problems.push({ code: 'files_duplicate_name', field, params: { name } });
    seen.add(name);
    if (!Array.isArray(entry.refs) || entry.refs.length === 0 || entry.nativePath !== undefined || entry.createSharedDirectory !== undefined) {
      problems.push({ code: 'files_bad_entry', field, params: { name } });
      continue;
    }
    const ids: string[] = [];
    for (const ref of entry.refs as unknown[]) {
      const id = typeof ref === 'string' ? ref : ref && typeof ref === 'object' && typeof (ref as { id?: unknown }).id === 'string' ? (ref as { id: string }).id : '';
      const row = id ? await repo.get(owner, id) : undefined;
      if (!row || !existsSync(row.path)) problems.push({ code: 'files_unknown_ref', field: `${field}.refs`, params: { name, fileId: id } });
      else ids.push(id);
    }
    out.push({ name, refs: ids });
  }
  if (problems.length > 0) throw new FengYuError('invalid_files', { count: problems.length }, problems);
  return missingCheck(out, contract);
}

function missingCheck(files: TaskFile[], contract: InputContract): TaskFile[] {
  const given = new Set(files.map((f) => f.name));
  for (const name of contract.files) {
    if (!contract.required.includes(name) || given.has(name)) continue;
    const title = contract.properties[name]?.title;
    const input = typeof title === 'string' && title.trim() ? title : name;
    throw new FengYuError('input_file_missing', { input }, [{ code: 'input_missing', field: name, params: { input } }]);
  }
  return files;
}
