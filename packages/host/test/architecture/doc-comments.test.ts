import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './tree';

/**
 * The contract package documents itself: every exported declaration of packages/protocol/src
 * (tests and the i18n message tables aside) and every member of an exported interface or type
 * (nested object types and the fields of exported `z.object` schemas included) carries a `/** … *\/`
 * comment stating its rule. Below the floor the test names each one that lacks it.
 */

const root = join(import.meta.dirname, '../../../..');
const protocol = join(root, 'packages/protocol/src');

/**
 * Share of documented items below which the test fails, naming every undocumented one. The package
 * reached 100 %; the floor leaves 1 % so a field added in a parallel change without its comment
 * does not stop the build at once.
 */
const FLOOR = 0.99;

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

  // Members of object types anywhere inside an exported type, nested literals included; the
  // filter of an `Extract`/`Exclude` (`Extract<GraphNode, { type: 'input' }>`) declares nothing.
  const typeMembers = (node: ts.Node, owner: string) => {
    const visit = (n: ts.Node, path: string) => {
      if (ts.isTypeReferenceNode(n) && /^(Extract|Exclude)$/.test(n.typeName.getText(sf))) return;
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

  // Names exported through a list (`export { spec as errorSpecOf }`) count as exported
  // declarations, documented on the declaration or on the list.
  const listed = new Map<string, boolean>();
  for (const st of sf.statements) {
    if (!ts.isExportDeclaration(st) || st.moduleSpecifier || !st.exportClause || !ts.isNamedExports(st.exportClause)) continue;
    for (const e of st.exportClause.elements) listed.set((e.propertyName ?? e.name).getText(sf), hasDoc(sf, st));
  }
  const declared = (st: ts.Statement): string[] => (ts.isVariableStatement(st) ? st.declarationList.declarations.map((d) => nameOf(d)) : 'name' in st && st.name ? [nameOf(st as ts.Statement & { name: ts.Node })] : []);

  for (const st of sf.statements) {
    const viaList = declared(st).filter((n) => listed.has(n));
    if (!isExported(st) && viaList.length === 0) continue;
    const listDoc = viaList.some((n) => listed.get(n));
    if (ts.isVariableStatement(st)) {
      const documented = hasDoc(sf, st) || listDoc;
      for (const d of st.declarationList.declarations) {
        add(d, nameOf(d), documented || hasDoc(sf, d));
        if (d.initializer) schemaFields(d.initializer, nameOf(d));
      }
    } else if (ts.isInterfaceDeclaration(st)) {
      add(st, nameOf(st), hasDoc(sf, st) || listDoc);
      typeMembers(st, nameOf(st));
    } else if (ts.isTypeAliasDeclaration(st)) {
      add(st, nameOf(st), hasDoc(sf, st) || listDoc);
      typeMembers(st.type, nameOf(st));
    } else if (ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)) {
      add(st, nameOf(st), hasDoc(sf, st) || listDoc);
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
      '/** Only input nodes. */',
      "export type C = Extract<B, { type: 'input' }>;",
      '/** Seconds. */',
      'export function fn(): void {}',
      'const hidden = 1;',
      'export { hidden };',
      'const shown = 2;',
      '/** Two. */',
      'export { shown as two };',
    ].join('\n');
    const items = itemsOf(join(protocol, 'sample.ts'), sample);
    const missing = items.filter((i) => !i.documented).map((i) => i.where.replace(/^\S+ /, ''));
    expect(missing).toEqual(['A.b', 'A.b.c', 'B', 'B.e', 'S', 'S.g', 'S.g.h', 'hidden']);
    expect(items.length).toBe(15);
  });
});
