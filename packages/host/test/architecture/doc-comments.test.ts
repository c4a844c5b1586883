import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './tree';

/**
 * The contract package documents itself: every exported declaration of packages/protocol/src
 * (tests and the i18n message tables aside) and every member of an exported interface or type
 * (nested object types and the fields of exported `z.object` schemas included) carries a `/** … *\/`
 * comment stating its rule. The test names each one that lacks it.
 */

const root = join(import.meta.dirname, '../../../..');
const protocol = join(root, 'packages/protocol/src');

/** Share of documented items below which the test fails (raised to what the package reached). */
const FLOOR = 0.84;

interface Item {
  where: string;
  documented: boolean;
}

const isExported = (node: ts.Node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** A node is documented when a JSDoc block (`/**`) is among the comments right before it. */
function hasDoc(sf: ts.SourceFile, node: ts.Node): boolean {
  return sf.text.slice(node.getFullStart(), node.getStart(sf)).includes('/**');
}

/** The items of one file: exported declarations, members of the types they declare, fields of their schemas. */
export function itemsOf(file: string, text = readFileSync(file, 'utf8')): Item[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Item[] = [];
  const add = (node: ts.Node, name: string, documented = hasDoc(sf, node)) =>
    out.push({ where: `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1} ${name}`, documented });
  const nameOf = (n: ts.Node & { name?: ts.Node }) => (n.name ? n.name.getText(sf) : '?');

  // Members of object types anywhere inside an exported type, nested literals included.
  const typeMembers = (node: ts.Node, owner: string) => {
    const visit = (n: ts.Node, path: string) => {
      if (ts.isTypeLiteralNode(n) || ts.isInterfaceDeclaration(n)) {
        for (const m of n.members) {
          if (ts.isIndexSignatureDeclaration(m)) {
            if (m.type) visit(m.type, `${path}[]`);
            continue;
          }
          const member = `${path}.${nameOf(m)}`;
          add(m, member);
          ts.forEachChild(m, (c) => visit(c, member));
        }
        return;
      }
      ts.forEachChild(n, (c) => visit(c, path));
    };
    visit(node, owner);
  };

  // Fields of `z.object({ … })` literals inside an exported schema.
  const schemaFields = (node: ts.Node, owner: string) => {
    const visit = (n: ts.Node, path: string) => {
      if (ts.isCallExpression(n) && /(^|\.)(object|strictObject|looseObject)$/.test(n.expression.getText(sf))) {
        const [shape] = n.arguments;
        if (shape && ts.isObjectLiteralExpression(shape)) {
          for (const p of shape.properties) {
            const field = `${path}.${nameOf(p as ts.PropertyAssignment)}`;
            if (ts.isSpreadAssignment(p)) continue;
            add(p, field);
            ts.forEachChild(p, (c) => visit(c, field));
          }
          return;
        }
      }
      ts.forEachChild(n, (c) => visit(c, path));
    };
    visit(node, owner);
  };

  for (const st of sf.statements) {
    if (!isExported(st)) continue;
    if (ts.isVariableStatement(st)) {
      const documented = hasDoc(sf, st);
      for (const d of st.declarationList.declarations) {
        add(d, nameOf(d), documented || hasDoc(sf, d));
        if (d.initializer) schemaFields(d.initializer, nameOf(d));
      }
    } else if (ts.isInterfaceDeclaration(st)) {
      add(st, nameOf(st));
      typeMembers(st, nameOf(st));
    } else if (ts.isTypeAliasDeclaration(st)) {
      add(st, nameOf(st));
      typeMembers(st.type, nameOf(st));
    } else if (ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)) {
      add(st, nameOf(st));
    }
  }
  return out;
}

const contractFiles = () => filesUnder(protocol).filter((f) => !f.includes('/i18n/'));

describe('the contract package', () => {
  it('documents every exported declaration and every member of its types', () => {
    const items = contractFiles().flatMap((f) => itemsOf(f));
    const missing = items.filter((i) => !i.documented).map((i) => i.where);
    const share = (items.length - missing.length) / items.length;
    expect(items.length).toBeGreaterThan(500);
    expect(share >= FLOOR ? [] : missing, `${Math.round(share * 1000) / 10} % documented`).toEqual([]);
  });

  it('counts what a reader would miss and accepts what is there', () => {
    const sample = [
      '/** A thing. */',
      'export interface A {',
      '  /** Documented. */',
      '  a: string;',
      '  b: { c: number };',
      '}',
      'export type B = { /** d */ d: string } | { e: string };',
      'export const S = z.object({ /** f */ f: z.string(), g: z.object({ h: z.number() }) });',
      '/** Seconds. */',
      'export function fn(): void {}',
      'const hidden = 1;',
      'export { hidden };',
    ].join('\n');
    const items = itemsOf(join(protocol, 'sample.ts'), sample);
    const missing = items.filter((i) => !i.documented).map((i) => i.where.replace(/^\S+ /, ''));
    expect(missing).toEqual(['A.b', 'A.b.c', 'B', 'B.e', 'S', 'S.g', 'S.g.h']);
    expect(items.length).toBe(12);
  });
});
