import { exactReference, fileInputOf, formatPath, type InputSource, type PathPart, scanString } from '@fengyu/protocol';

/**
 * The three ways to fill an input (manual / reference / expression) and the conversions between
 * them. A reference is one exact placeholder (or `@file:<input>`), which keeps the referenced
 * value's JSON type; an expression is text with embedded placeholders; anything else is manual.
 */

export function detectSource(value: unknown): InputSource {
  if (typeof value !== 'string') return 'manual';
  if (fileInputOf(value) !== undefined || exactReference(value) !== undefined) return 'reference';
  if (value.includes('{{')) return 'expression';
  return 'manual';
}

export function sourceOf(value: unknown, remembered?: InputSource): InputSource {
  return remembered ?? detectSource(value);
}

/** The value an input takes when the author switches its source. */
export function convertValue(value: unknown, from: InputSource, to: InputSource): unknown {
  if (from === to) return value;
  if (to === 'expression') {
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  if (to === 'reference') return from === 'expression' && typeof value === 'string' && exactReference(value.trim()) ? value.trim() : '';
  // to manual: a reference/expression string has no literal meaning; start empty
  return undefined;
}

export function nodeRef(nodeId: string, path: PathPart[]): string {
  return `{{node.${nodeId}.result${formatPath(path)}}}`;
}

/** The whole-value form of a file input (the only form the validator accepts for one). */
export function fileRef(name: string): string {
  return `@file:${name}`;
}

export function inputRef(name: string, path: PathPart[] = []): string {
  return `{{inputs.${name}${formatPath(path)}}}`;
}

export interface ExpressionToken {
  raw: string;
  ok: boolean;
  /** Reason key when not ok: malformed, unknown node, undeclared input. */
  problem?: 'malformed' | 'unknown_node' | 'unknown_input';
}

/** Checks every placeholder of an expression against the known node ids and input names. */
export function checkExpression(text: string, nodeIds: ReadonlySet<string>, inputNames: ReadonlySet<string>): ExpressionToken[] {
  return scanString(text).map((t) => {
    if (!t.ok) return { raw: t.raw, ok: false, problem: 'malformed' };
    const ref = t.ref;
    if (ref.kind === 'node' && !nodeIds.has(ref.id)) return { raw: ref.raw, ok: false, problem: 'unknown_node' };
    if (ref.kind === 'inputs' && !inputNames.has(ref.name)) return { raw: ref.raw, ok: false, problem: 'unknown_input' };
    return { raw: ref.raw, ok: true };
  });
}

/** The step a reference string points at (for auto-creating the edge), if it is a node reference. */
export function referencedNode(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ref = exactReference(value);
  return ref?.kind === 'node' ? ref.id : undefined;
}
