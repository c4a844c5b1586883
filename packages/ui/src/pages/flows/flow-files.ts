import { exportFileName, stableJson, type WorkflowExport } from '@fengyu/protocol';

/** Flow documents as files in the browser: download an export, read a dropped or picked file. */

/** Offers `doc` as a download named after the flow (`<slug>.<id>.fengyu.json`). */
export function downloadExport(doc: WorkflowExport, workflowId: string, win: Window & typeof globalThis = window): void {
  const blob = new Blob([stableJson(doc)], { type: 'application/json' });
  const url = win.URL.createObjectURL(blob);
  const a = win.document.createElement('a');
  a.href = url;
  a.download = exportFileName(doc.name, workflowId);
  a.rel = 'noopener';
  win.document.body.appendChild(a);
  a.click();
  a.remove();
  win.setTimeout(() => win.URL.revokeObjectURL(url), 10_000);
}

/** The JSON in a file, or an error whose message says it is not JSON. */
export async function readJsonFile(file: Blob, notJson: string): Promise<unknown> {
  const text = await file.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(notJson);
  }
}

/** The first file of a drop that may be a flow document (`.json`, or JSON typed), if any. */
export function droppedJson(files: FileList | readonly File[] | null | undefined): File | undefined {
  for (const f of Array.from(files ?? [])) if (f.name.toLowerCase().endsWith('.json') || f.type === 'application/json') return f;
  return undefined;
}
