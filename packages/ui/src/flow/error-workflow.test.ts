import type { CatalogEntry } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { errorWorkflowChoices, hasFailedRunInput } from './error-workflow';

const failedRun = { type: 'object', properties: { failedRun: { type: 'object' } } };

describe('error workflow choices', () => {
  it('offers published workflows with an object failedRun input and lists the rest disabled with the reason', () => {
    const defs = [
      { id: 'self', name: 'This flow', publishedVersion: 1, inputSchema: failedRun },
      { id: 'draft', name: 'Alerts draft', publishedVersion: null, inputSchema: failedRun },
      { id: 'text', name: 'Text input', publishedVersion: 2, inputSchema: { type: 'object', properties: { failedRun: { type: 'string' } } } },
      { id: 'notify', name: 'Notify me', publishedVersion: 3, inputSchema: { type: 'object' } },
    ];
    // the published contract (the catalog's run_workflow_notify) wins over the draft's schema
    const catalog = [{ name: 'run_workflow_notify', source: 'workflow', origin: 'notify', inputSchema: failedRun }] as unknown as CatalogEntry[];
    expect(errorWorkflowChoices(defs, catalog, 'self')).toEqual([
      { id: 'notify', name: 'Notify me' },
      { id: 'draft', name: 'Alerts draft', blocked: 'notPublished' },
      { id: 'text', name: 'Text input', blocked: 'noFailedRun' },
      { id: 'self', name: 'This flow', blocked: 'self' },
    ]);
    expect(errorWorkflowChoices(defs, [], 'self').find((c) => c.id === 'notify')?.blocked).toBe('noFailedRun');
  });

  it('reads failedRun as an object input only when its type is object', () => {
    expect(hasFailedRunInput(failedRun)).toBe(true);
    expect(hasFailedRunInput({ type: 'object', properties: { failedRun: { type: ['object', 'null'] } } })).toBe(true);
    expect(hasFailedRunInput({ type: 'object', properties: { failed: { type: 'object' } } })).toBe(false);
    expect(hasFailedRunInput(undefined)).toBe(false);
  });
});
