import type { JsonSchema } from '@fengyu/protocol';
import { computed, reactive } from 'vue';
import type { EnumOption, FileRef, RunFile } from '../api/workflows.api';
import { readTypedChoice } from './typed-choice';

/**
 * The state of a form generated from a workflow's input schema (the run dialog's and the schedule
 * form's): typed values, picked uploads (`fengyu-file` inputs), live `x-fengyu-enum` choices, and
 * which required fields are still missing (named by their titles). Automatic inputs (a folder
 * created per run) are listed apart: nobody fills them.
 */

export type InputProp = JsonSchema & { title?: string; description?: string };

export interface InputFormServices {
  options: (workflowId: string, input: string) => Promise<EnumOption[]>;
  upload: (file: File) => Promise<FileRef>;
}

export function inputForm(schema: () => JsonSchema | undefined, services: InputFormServices, workflowId: () => string) {
  const props = () => (schema()?.properties ?? {}) as Record<string, InputProp>;
  const fields = computed(() => Object.entries(props()).filter(([, p]) => p['x-fengyu-auto'] === undefined));
  const autoFields = computed(() => Object.entries(props()).filter(([, p]) => p['x-fengyu-auto'] !== undefined));
  const required = computed(() => new Set((schema()?.required as string[] | undefined) ?? []));
  const values = reactive<Record<string, unknown>>({});
  const uploads = reactive<Record<string, FileRef>>({});
  const uploading = reactive<Record<string, boolean>>({});
  const options = reactive<Record<string, EnumOption[]>>({});
  const optionErrors = reactive<Record<string, string>>({});
  const uploadErrors = reactive<Record<string, string>>({});
  const typed = reactive<Record<string, string>>({});
  const typedErrors = computed(() => {
    const out: Record<string, string[]> = {};
    for (const [name, text] of Object.entries(typed)) {
      const read = readTypedChoice(text);
      if (!read.ok) out[name] = read.invalid;
    }
    return out;
  });

  const isFile = (p: InputProp) => p.format === 'fengyu-file';
  const kind = (p: InputProp) => (Array.isArray(p.type) ? p.type[0] : p.type) as string | undefined;
  const label = (name: string, p: InputProp) => p.title || name;
  const asText = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

  function setValue(name: string, p: InputProp, raw: string) {
    const k = kind(p);
    if (raw === '') delete values[name];
    else if (k === 'number' || k === 'integer') values[name] = Number(raw);
    else if (k === 'array' || k === 'object') {
      try {
        values[name] = JSON.parse(raw);
      } catch {
        values[name] = raw;
      }
    } else values[name] = raw;
  }

  /** Typing beside a picker replaces the picked value (and clearing the text gives the picker back). */
  function setTyped(name: string, p: InputProp, text: string) {
    typed[name] = text;
    const read = readTypedChoice(text);
    if (text.trim() === '') delete values[name];
    else if (read.ok) setValue(name, p, read.value);
  }

  async function pickFile(name: string, e: Event) {
    const file = (e.target as HTMLInputElement).files?.[0];
    if (!file) return;
    uploading[name] = true;
    delete uploadErrors[name];
    try {
      uploads[name] = await services.upload(file);
    } catch (err) {
      uploadErrors[name] = (err as Error).message;
    } finally {
      uploading[name] = false;
    }
  }

  /** Schema defaults first, then `given` (e.g. an edited schedule's inputs). */
  function reset(given: Record<string, unknown> = {}) {
    for (const k of Object.keys(values)) delete values[k];
    for (const k of Object.keys(uploads)) delete uploads[k];
    for (const k of Object.keys(typed)) delete typed[k];
    for (const k of Object.keys(options)) delete options[k];
    for (const k of Object.keys(optionErrors)) delete optionErrors[k];
    for (const [name, p] of Object.entries(props())) if (p.default !== undefined) values[name] = p.default;
    Object.assign(values, given);
  }

  function loadOptions() {
    for (const [name, p] of fields.value) {
      if (p['x-fengyu-enum'] === undefined || options[name]) continue;
      services.options(workflowId(), name).then(
        (list) => (options[name] = list),
        (e: Error) => (optionErrors[name] = e.message),
      );
    }
  }

  const missing = computed(() =>
    fields.value.filter(([name, p]) => required.value.has(name) && (isFile(p) ? !uploads[name] : values[name] === undefined || values[name] === '')).map(([name, p]) => label(name, p)),
  );
  const busy = computed(() => Object.values(uploading).some(Boolean));

  /** The typed values (file inputs travel as `files`). */
  function valueInputs(): Record<string, unknown> {
    const inputs: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(values)) if (!uploads[name] && !isFile(props()[name] ?? {})) inputs[name] = v;
    return inputs;
  }
  /** The picked uploads as a run's, task's or schedule's `files`. */
  const runFiles = (): RunFile[] => Object.entries(uploads).map(([name, ref]) => ({ name, refs: [ref] }));

  return { fields, autoFields, required, values, uploads, uploading, options, optionErrors, uploadErrors, typed, typedErrors, missing, busy, isFile, kind, label, asText, setValue, setTyped, pickFile, reset, loadOptions, valueInputs, runFiles };
}

export type InputForm = ReturnType<typeof inputForm>;
