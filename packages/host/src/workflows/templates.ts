import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentPlanSchema, planToGraph, WORKFLOW_ID_PATTERN, type WorkflowTemplate } from '@fengyu/protocol';
import type { Logger } from 'pino';
import { z } from 'zod';

/**
 * The template gallery. Templates are JSON files (`templates/*.json` beside this module, plus any
 * extra directories a domain passes in), read once at start. A file that does not parse is
 * logged and skipped; it never stops the host. Create-from-template validates like any save.
 */

export const TEMPLATES_DIR = join(import.meta.dirname, 'templates');

const TemplateFileSchema = z
  .object({
    id: z.string().regex(WORKFLOW_ID_PATTERN),
    name: z.string().min(1).max(200),
    description: z.string().max(4000).default(''),
    category: z.string().min(1).max(100).default('general'),
    inputSchema: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
    plan: AgentPlanSchema,
    graph: z.record(z.string(), z.unknown()).optional(),
  })
  .strip();

export class TemplateStore {
  private readonly byId = new Map<string, WorkflowTemplate>();

  constructor(private readonly logger?: Logger) {}

  /** Loads every `*.json` of `dir` (missing directory: nothing). Later ids replace earlier ones. */
  loadDir(dir: string): number {
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
    } catch {
      return 0;
    }
    let n = 0;
    for (const f of files) {
      try {
        this.add(JSON.parse(readFileSync(join(dir, f), 'utf8')));
        n += 1;
      } catch (err) {
        this.logger?.warn({ file: join(dir, f), err: (err as Error).message }, 'skipping an invalid workflow template');
      }
    }
    return n;
  }

  /** Adds one template (a parsed template file); throws when it does not fit the format. */
  add(raw: unknown): WorkflowTemplate {
    const t = TemplateFileSchema.parse(raw);
    const template: WorkflowTemplate = { ...t, graph: t.graph ?? { ...planToGraph(t.plan, t.inputSchema) } };
    this.byId.set(t.id, template);
    return template;
  }

  get(id: string): WorkflowTemplate | undefined {
    return this.byId.get(id);
  }

  list(): WorkflowTemplate[] {
    return [...this.byId.values()].sort((a, b) => a.category.localeCompare(b.category) || a.name.localeCompare(b.name));
  }
}
