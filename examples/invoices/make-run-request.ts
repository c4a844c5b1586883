/**
 * Writes a `fengyu run` request for the "Excel split → batch email" template: the template's
 * plan and input defaults, your inputs, the workbook as an absolute `nativePath`, and a fresh
 * shared output folder. Prints the JSON on stdout.
 *
 *   npx tsx examples/invoices/make-run-request.ts [--workbook examples/invoices.xlsx]
 *       [--column Region] [--account local-outbox] [--recipients you@example.com] > /tmp/split-email.json
 *   node bin/fengyu.mjs run /tmp/split-email.json --mode approve-for-me
 */
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

const TEMPLATE = join(import.meta.dirname, '../../packages/host/src/workflows/templates/excel-split-email.json');

interface Template {
  plan: { goal?: string; steps: unknown[] };
  inputSchema: { properties: Record<string, { default?: unknown }> };
}

export function runRequest(args: { workbook: string; column?: string; account?: string; recipients: string }): Record<string, unknown> {
  const t = JSON.parse(readFileSync(TEMPLATE, 'utf8')) as Template;
  const defaults = Object.fromEntries(Object.entries(t.inputSchema.properties).flatMap(([k, p]) => (p.default === undefined ? [] : [[k, p.default]])));
  const column = args.column ?? String(defaults.splitColumn);
  return {
    goal: `Split ${basename(args.workbook)} by the ${column} column and e-mail each part`,
    workflow: t.plan,
    inputs: { ...defaults, splitColumn: column, account: args.account ?? defaults.account, recipients: args.recipients },
    files: [
      { name: 'workbook', nativePath: resolve(args.workbook) },
      { name: 'output', createSharedDirectory: true },
    ],
    config: { planApproval: true },
  };
}

if (process.argv[1]?.endsWith('make-run-request.ts')) {
  const flag = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const request = runRequest({
    workbook: flag('workbook') ?? join(import.meta.dirname, '../invoices.xlsx'),
    column: flag('column'),
    account: flag('account'),
    recipients: flag('recipients') ?? 'you@example.com',
  });
  process.stdout.write(`${JSON.stringify(request, null, 2)}\n`);
}
