import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ToolInfo, validatePlan } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as email from '../../../plugins/email/src/schemas';
import * as excel from '../../../plugins/excel/src/schemas';

/**
 * The plan examples of docs/workflows.md: each block marked `<!-- example: <file> -->` equals that
 * file, and the file passes the one plan validator against the official plugins' real input schemas.
 */

const root = join(import.meta.dirname, '../../../..');
const tools: Record<string, z.ZodType> = {
  excel_complex_config: excel.ConfigInput,
  excel_execute: excel.ExecuteInput,
  email_send_batch: email.SendBatchInput,
  confirm_send: email.ConfirmInput,
};
const tool = (name: string): ToolInfo | undefined => {
  const schema = tools[name];
  if (!schema) return undefined;
  const effect = name === 'confirm_send' ? 'external' : name === 'excel_execute' ? 'write' : 'read';
  return { name, inputSchema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as ToolInfo['inputSchema'], effect, idempotent: effect === 'read', source: 'plugin', available: true };
};
const ctx = { tool, inputNames: new Set(['workbook', 'output', 'splitColumn', 'account', 'managers', 'team']), fileInputNames: new Set(['workbook', 'output']) };

function examples(): { file: string; json: string }[] {
  const doc = readFileSync(join(root, 'docs/workflows.md'), 'utf8');
  return [...doc.matchAll(/<!-- example: (\S+) -->\n```json\n([\s\S]*?)\n```/g)].map((m) => ({ file: m[1] as string, json: m[2] as string }));
}

describe('docs/workflows.md plan examples', () => {
  it('the headline scenario with a loop and a condition is the fixture, and it validates', () => {
    const found = examples();
    expect(found.map((e) => e.file)).toContain('examples/split-route-email.json');
    for (const e of found) {
      const fixture = JSON.parse(readFileSync(join(root, e.file), 'utf8'));
      expect(JSON.parse(e.json), e.file).toEqual(fixture);
      const result = validatePlan(fixture, ctx);
      expect(result.ok ? [] : result.problems, e.file).toEqual([]);
    }
  });

  it('the validator refuses the example with a broken port or comparison, naming step and field', () => {
    const fixture = JSON.parse(readFileSync(join(root, 'examples/split-route-email.json'), 'utf8'));
    const body = fixture.steps[2].steps;
    body[0].cases[0].when.all[0].op = 'more';
    body[2].dependsOn = ['size:huge'];
    const result = validatePlan(fixture, ctx);
    expect(result.ok ? [] : result.problems.map((p) => [p.code, p.stepId, p.field])).toEqual([
      ['condition_operator_unknown', 'size', 'cases[0].when.all[0].op'],
      ['step_unknown_dependency', 'mail_team', 'dependsOn'],
    ]);
  });
});
