import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Language, type Node, Parser } from 'web-tree-sitter';

/**
 * Loads tree-sitter-bash's bundled wasm grammar into web-tree-sitter, once per process and
 * lazily (on the first command to analyse). The emscripten runtime behind `Parser.init` is
 * process-global anyway, so this cache is the one deliberate module-level state of the domain.
 */

export type SyntaxNode = Node;

/** Parses bash source; the callback sees the tree's root and the tree is freed afterwards. */
export interface BashParser {
  parse<T>(source: string, use: (root: SyntaxNode) => T): T;
}

let loading: Promise<BashParser> | undefined;

export function loadBashParser(): Promise<BashParser> {
  loading ??= load().catch((err) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

async function load(): Promise<BashParser> {
  const require = createRequire(import.meta.url);
  const wasm = join(dirname(require.resolve('tree-sitter-bash/package.json')), 'tree-sitter-bash.wasm');
  await Parser.init();
  const language = await Language.load(wasm);
  const parser = new Parser();
  parser.setLanguage(language);
  return {
    parse(source, use) {
      const tree = parser.parse(source);
      if (!tree) throw new Error('tree-sitter returned no tree');
      try {
        return use(tree.rootNode);
      } finally {
        tree.delete();
      }
    },
  };
}
