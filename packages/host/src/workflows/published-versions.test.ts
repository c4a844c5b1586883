import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, stopSharedPostgres, testDialects } from '../../test/support/postgres';
import type { OpenedDatabase } from '../storage/database';
import { CatalogSnapshot } from '../tools/catalog';
import type { Tool } from '../tools/tool';
import { PublishedVersions } from './published-versions';
import { TemplateStore } from './templates';
import { WorkflowRepository } from './workflow.repository';
import { WorkflowService } from './workflow.service';

/**
 * The active version of a workflow, kept between deliveries on the host's own SQLite file: each
 * test first reads it (so it is kept), then publishes or deletes through the service and expects
 * the very next read to see the change. On PostgreSQL nothing is kept (another host may publish).
 */

const tick: Tool = { name: 'tick', description: 'no-op', inputSchema: { type: 'object' }, effect: 'read', source: 'builtin', id: 'builtin:tick', schemaRevision: '1', idempotent: true, available: true, invoke: async () => null };
const definition = (text: string) => ({ name: text, description: '', inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'tick', tool: 'tick', arguments: {} }] } });

/** Reads that can be held after they read the row (a read in flight). */
class HeldVersions extends PublishedVersions {
  hold?: Promise<void>;
  protected override async read(owner: string, workflowId: string): Promise<number | null> {
    const version = await super.read(owner, workflowId);
    if (this.hold) await this.hold;
    return version;
  }
}

afterAll(() => stopSharedPostgres());

describe.each(testDialects())('published versions on %s', (dialect) => {
  let opened: OpenedDatabase;
  let service: WorkflowService;

  beforeAll(async () => {
    opened = await openTestDatabase(dialect);
    const snapshot = new CatalogSnapshot([tick]);
    service = new WorkflowService({ repo: new WorkflowRepository(opened.db), clock: { now: () => Date.now() }, templates: new TemplateStore(), baseCatalog: async () => snapshot });
  });
  afterAll(async () => {
    await opened?.close();
  });

  async function published(owner = 'alice'): Promise<{ id: string; revision: number }> {
    const draft = await service.create(owner, definition('one'));
    const pub = await service.publish(owner, draft.id, draft.revision);
    return { id: pub.id, revision: pub.revision };
  }

  it('sees a new publish on the very next read after a warm one', async () => {
    const versions = new PublishedVersions(service, opened.db);
    const wf = await published();
    expect(await versions.get('alice', wf.id)).toBe(1);
    expect(versions.peek('alice', wf.id)).toBe(dialect === 'sqlite' ? 1 : undefined);
    const saved = await service.update('alice', wf.id, definition('two'), wf.revision);
    await service.publish('alice', wf.id, saved.revision);
    expect(versions.peek('alice', wf.id)).toBeUndefined();
    expect(await versions.get('alice', wf.id)).toBe(2);
    versions.close();
  });

  it('answers workflow_not_found on the very next read after a deletion', async () => {
    const versions = new PublishedVersions(service, opened.db);
    const wf = await published();
    expect(await versions.get('alice', wf.id)).toBe(1);
    await service.delete('alice', wf.id);
    await expect(versions.get('alice', wf.id)).rejects.toMatchObject({ code: 'workflow_not_found' });
    versions.close();
  });

  it('keeps each owner apart and reports a draft as unpublished', async () => {
    const versions = new PublishedVersions(service, opened.db);
    const wf = await published('alice');
    await expect(versions.get('bob', wf.id)).rejects.toMatchObject({ code: 'workflow_not_found' });
    const draft = await service.create('alice', definition('draft'));
    expect(await versions.get('alice', draft.id)).toBeNull();
    await service.publish('alice', draft.id, draft.revision);
    expect(await versions.get('alice', draft.id)).toBe(1);
    versions.close();
  });

  it('does not keep an answer read while a publish was running', async () => {
    const versions = new HeldVersions(service, opened.db);
    const wf = await published();
    const saved = await service.update('alice', wf.id, definition('two'), wf.revision);
    let release!: () => void;
    versions.hold = new Promise((r) => {
      release = r;
    });
    // this read has version 1 and is still in flight when version 2 is published
    const inFlight = versions.get('alice', wf.id);
    await service.publish('alice', wf.id, saved.revision);
    versions.hold = undefined;
    release();
    expect(await inFlight).toBe(1);
    expect(versions.peek('alice', wf.id)).toBeUndefined();
    expect(await versions.get('alice', wf.id)).toBe(2);
    versions.close();
  });

  it.runIf(dialect === 'postgres')('reads every time on a shared database (another host may publish)', async () => {
    const versions = new PublishedVersions(service, opened.db);
    const other = new WorkflowService({ repo: new WorkflowRepository(opened.db), clock: { now: () => Date.now() }, templates: new TemplateStore(), baseCatalog: async () => new CatalogSnapshot([tick]) });
    const wf = await published();
    expect(await versions.get('alice', wf.id)).toBe(1);
    const saved = await other.update('alice', wf.id, definition('two'), wf.revision);
    await other.publish('alice', wf.id, saved.revision);
    expect(await versions.get('alice', wf.id)).toBe(2);
    versions.close();
  });
});
