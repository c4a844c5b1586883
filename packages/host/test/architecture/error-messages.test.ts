import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LOCALES, MESSAGES } from '@fengyu/protocol';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './tree';

/**
 * Every error a user can see reads as a sentence in both languages: each code raised anywhere has
 * an English and a Chinese message, and every `{placeholder}` of both is supplied where it is
 * raised (no "the the bytes", no raw "{count}").
 */

const root = join(import.meta.dirname, '../../../..');
const SOURCES = ['packages/host/src', 'packages/protocol/src', 'packages/plugin-sdk/src'];

const files = (dir: string) => filesUnder(dir);

interface Site {
  where: string;
  code: string;
  /** Keys given in the params object literal, or null when they cannot be known statically. */
  keys: Set<string> | null;
}

function literalKeys(sf: ts.SourceFile, arg: ts.Expression | undefined): Set<string> | null {
  if (arg === undefined) return new Set();
  if (!ts.isObjectLiteralExpression(arg)) return null;
  const keys = new Set<string>();
  for (const prop of arg.properties) {
    if (ts.isSpreadAssignment(prop)) return null;
    if (prop.name) keys.add(prop.name.getText(sf).replace(/^['"]|['"]$/g, ''));
  }
  return keys;
}

/** Finds `new FengYuError('code', {…})` sites and `{code: '…', params: {…}}` problems with a literal code. */
function sites(file: string): Site[] {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Site[] = [];
  const site = (node: ts.Node, code: string, keys: Set<string> | null): Site => ({ where: `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`, code, keys });
  const visit = (node: ts.Node) => {
    if (ts.isNewExpression(node) && node.expression.getText(sf) === 'FengYuError') {
      const [codeArg, paramsArg] = node.arguments ?? [];
      if (codeArg && ts.isStringLiteralLike(codeArg)) out.push(site(node, codeArg.text, literalKeys(sf, paramsArg)));
    }
    if (ts.isObjectLiteralExpression(node)) {
      const prop = (name: string) => node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(sf) === name);
      const code = prop('code')?.initializer;
      const params = prop('params');
      if (code && ts.isStringLiteralLike(code) && params) out.push(site(node, code.text, literalKeys(sf, params.initializer)));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const placeholders = (template: string) => [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
const all = SOURCES.flatMap((d) => files(join(root, d))).flatMap(sites);

describe('error messages', () => {
  it('finds the raise sites (the scan itself works)', () => {
    expect(all.length).toBeGreaterThan(50);
  });

  it('has an English and a Chinese message for every code raised', () => {
    const missing = all.filter((s) => LOCALES.some((l) => MESSAGES[l][s.code] === undefined)).map((s) => `${s.where} ${s.code}`);
    expect(missing).toEqual([]);
  });

  it('fills every placeholder of both languages where the error is raised', () => {
    const unfilled: string[] = [];
    for (const s of all) {
      if (!s.keys) continue;
      for (const l of LOCALES) {
        const template = MESSAGES[l][s.code];
        if (!template) continue;
        for (const p of placeholders(template)) if (!s.keys.has(p)) unfilled.push(`${s.where} ${s.code} (${l}) lacks {${p}}`);
      }
    }
    expect(unfilled).toEqual([]);
  });

  it('uses the same placeholders in both languages', () => {
    const differ = Object.keys(MESSAGES.en).filter((code) => {
      const en = placeholders(MESSAGES.en[code] ?? '').sort().join();
      const zh = placeholders(MESSAGES['zh-CN'][code] ?? '').sort().join();
      return en !== zh;
    });
    expect(differ).toEqual([]);
  });
});
