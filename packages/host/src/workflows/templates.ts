import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentPlan, AgentPlanSchema, type JsonSchema, LOCALES, planToGraph, WORKFLOW_ID_PATTERN, type WorkflowTemplate } from '@fengyu/protocol';
import type { Logger } from 'pino';
import { z } from 'zod';

/**
 * The template gallery. Templates are JSON files (`templates/*.json` beside this module, plus any
 * extra directories a domain passes in), read once at start. A file that does not parse is
 * logged and skipped; it never stops the host. Create-from-template validates like any save.
 */

export const TEMPLATES_DIR = join(import.meta.dirname, 'templates');

/**
 * A template's texts in one UI language: its name and description (gallery), its inputs' titles,
 * descriptions and text defaults (Start node, run dialog), its steps' titles and its goal. A flow
 * created from the template in that language starts with these texts.
 */
const TemplateTextsSchema = z
  .object({
    name: z.string().min(1).max(200).optional(),
    description: z.string().max(4000).optional(),
    goal: z.string().max(4000).optional(),
    inputs: z.record(z.string(), z.object({ title: z.string().max(200).optional(), description: z.string().max(4000).optional(), default: z.string().max(4000).optional() }).strict()).optional(),
    steps: z.record(z.string(), z.object({ title: z.string().max(200).optional() }).strict()).optional(),
  })
  .strict();
export type TemplateTexts = z.infer<typeof TemplateTextsSchema>;

const TemplateFileSchema = z
  .object({
    id: z.string().regex(WORKFLOW_ID_PATTERN),
    name: z.string().min(1).max(200),
    description: z.string().max(4000).default(''),
    category: z.string().min(1).max(100).default('general'),
    inputSchema: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
    plan: AgentPlanSchema,
    graph: z.record(z.string(), z.unknown()).optional(),
    i18n: z.partialRecord(z.enum(LOCALES), TemplateTextsSchema).optional(),
  })
  .strip();

/** The template in `texts`' language (a template with its own saved graph keeps that graph's words). */
export function localizeTemplate(t: WorkflowTemplate & { i18n?: Partial<Record<string, TemplateTexts>> }, locale: string, ownGraph: boolean): WorkflowTemplate {
  const texts = t.i18n?.[locale];
  if (!texts) return t;
  const props = { ...((t.inputSchema.properties ?? {}) as Record<string, JsonSchema>) };
  for (const [name, x] of Object.entries(texts.inputs ?? {})) {
    if (!props[name]) continue;
    props[name] = { ...props[name], ...(x.title ? { title: x.title } : {}), ...(x.description ? { description: x.description } : {}), ...(x.default !== undefined && typeof props[name].default === 'string' ? { default: x.default } : {}) };
  }
  const inputSchema = { ...t.inputSchema, properties: props };
  const plan: AgentPlan = {
    ...t.plan,
    ...(texts.goal ? { goal: texts.goal } : {}),
    steps: t.plan.steps.map((step) => (texts.steps?.[step.id]?.title ? { ...step, title: texts.steps[step.id]?.title } : step)),
  };
  return { ...t, name: texts.name ?? t.name, description: texts.description ?? t.description, inputSchema, plan, graph: ownGraph ? t.graph : { ...planToGraph(plan, inputSchema) } };
}

export class TemplateStore {
  private readonly byId = new Map<string, WorkflowTemplate>();
  private readonly ownGraph = new Set<string>();

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

  /** The template, in `locale`'s words when it carries them. */
  get(id: string, locale?: string): WorkflowTemplate | undefined {
    const t = this.byId.get(id);
    return t && locale ? localizeTemplate(t, locale, this.ownGraph.has(id)) : t;
  }

  list(): WorkflowTemplate[] {
    return [...this.byId.values()].sort((a, b) => a.category.localeCompare(b.category) || a.name.localeCompare(b.name));
  }
}
