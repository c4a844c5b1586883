import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { htmlToText } from '../packages/host/src/net/html-text';

/**
 * Compares web_fetch's HTML → text/markdown converter with maintained libraries on real pages
 * saved in `bench/fixtures/html/`: `html-to-text` (text) and `turndown` (markdown). The libraries
 * are not dependencies of the project; install them beside it first:
 *
 *   npm install --no-save html-to-text@10.0.1 turndown@7.2.5   (or set HTMLCMP_MODULES to a folder)
 *   npx tsx bench/html-text-compare.ts
 *
 * Per page and converter it prints:
 * - recall: share of the words of the page's main content (the text of its `main` element, or
 *   body, without script/style) found in the output (multiset);
 * - leak: words of script/style/JSON blobs that are in the output but nowhere in the visible text;
 * - noise: share of output words that are not words of the main content (navigation, sidebars);
 * - checks: hand-written facts per page (a code block kept as lines, a link target, a heading);
 * - ms: median of 25 conversions after 5 warm-up ones; chars: output size.
 */

const modules = process.env.HTMLCMP_MODULES;
const load = async (name: string) => import(modules ? join(modules, 'node_modules', name, 'lib', name === 'turndown' ? 'turndown.cjs.js' : 'html-to-text.cjs') : name);
const htmlToTextLib: any = await load('html-to-text');
const Turndown: any = (await load('turndown')).default;
const { parseDocument, DomUtils }: any = await import(modules ? join(modules, 'node_modules', 'htmlparser2', 'dist', 'commonjs', 'index.js') : 'htmlparser2');

const dir = join(import.meta.dirname, 'fixtures/html');
const BASE = 'https://example.test/docs/page.html';

/** Facts each output should keep (a regular expression each, on the text or the markdown). */
const CHECKS: Record<string, Array<{ what: string; re: RegExp }>> = {
  'npm-package-json.html': [
    { what: 'code block lines', re: /\{\s*\n\s*"name"\s*:\s*"[^"]+"/ },
    { what: 'link target kept', re: /using-npm\/config\.html/ },
    { what: 'heading "dependencies"', re: /(^|\n)(#+ )?dependencies\s*\n/ },
    { what: 'list item', re: /\n\s*[-*]\s+(The name must be less than or equal to 214 characters)/ },
  ],
  'python-idle-help.html': [
    { what: 'heading "Menus"', re: /(^|\n)(#+ )?Menus?\b/ },
    { what: 'definition term', re: /New File/ },
    { what: 'key binding text', re: /C-c/ },
    { what: 'link target made absolute', re: /https:\/\/example\.test\/docs\/tk\.html/ },
  ],
  'mdbook-what-is-rustdoc.html': [
    { what: 'code block lines', re: /\$ cargo new docs[\s\S]{0,40}\n/ },
    { what: 'heading', re: /(^|\n)(#+ )?What is rustdoc\?/ },
    { what: 'sidebar table of contents left out', re: /^(?![\s\S]*Command-line arguments[\s\S]*How to read rustdoc output[\s\S]*What is rustdoc)/ },
  ],
  'rustdoc-option.html': [
    { what: 'method signature', re: /pub (const )?fn is_some\(&self\) -> bool/ },
    { what: 'example code lines', re: /let x: Option<u32> = Some\(2\);\s*\n/ },
    { what: 'heading "Variants"', re: /(^|\n)(#+ )?Variants/ },
  ],
};

const words = (s: string) => s.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

function bag(list: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of list) m.set(w, (m.get(w) ?? 0) + 1);
  return m;
}

function visibleText(node: any): string {
  if (node.type === 'script' || node.type === 'style' || node.name === 'script' || node.name === 'style' || node.name === 'template' || node.name === 'noscript') return ' ';
  if (node.type === 'text') return node.data;
  return ` ${(node.children ?? []).map(visibleText).join('')} `;
}

function reference(html: string) {
  const doc = parseDocument(html, { decodeEntities: true });
  const main = DomUtils.findOne((e: { name: string; attribs: Record<string, string> }) => e.name === 'main' || e.attribs?.role === 'main' || e.attribs?.class === 'body', doc.children, true);
  const body = DomUtils.findOne((e: { name: string }) => e.name === 'body', doc.children, true) ?? doc;
  const hidden = DomUtils.findAll((e: { name: string }) => e.name === 'script' || e.name === 'style', doc.children)
    .map((e: unknown) => DomUtils.textContent(e))
    .join(' ');
  const visible = new Set(words(visibleText(body)));
  return { main: words(visibleText(main ?? body)), visible, hidden: new Set(words(hidden).filter((w) => !visible.has(w))) };
}

function score(out: string, ref: ReturnType<typeof reference>) {
  const outWords = words(out);
  const have = bag(outWords);
  const need = bag(ref.main);
  let found = 0;
  for (const [w, n] of need) found += Math.min(n, have.get(w) ?? 0);
  const mainSet = new Set(ref.main);
  const leak = outWords.filter((w) => ref.hidden.has(w)).length;
  const noise = outWords.filter((w) => !mainSet.has(w)).length;
  return { recall: found / Math.max(1, ref.main.length), leak, noise: noise / Math.max(1, outWords.length) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function time(f: () => string): { ms: number; out: string } {
  let out = '';
  const t: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    out = f();
    if (i >= 5) t.push(performance.now() - t0);
  }
  return { ms: median(t), out };
}

const libText = (html: string) =>
  htmlToTextLib.convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { baseUrl: BASE, linkBrackets: ['(', ')'] } },
      { selector: 'img', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'h4', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  });
const turndown = new Turndown({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' }).remove(['script', 'style', 'nav', 'noscript', 'template', 'svg', 'iframe', 'head', 'select']);

const rows: string[] = ['| page | converter | recall | leak | noise | checks | ms | chars |', '|---|---|---|---|---|---|---|---|'];
for (const name of readdirSync(dir).filter((f) => f.endsWith('.html')).sort()) {
  const html = readFileSync(join(dir, name), 'utf8');
  const ref = reference(html);
  const runs: Array<[string, () => string]> = [
    ['ours (text)', () => htmlToText(html, { format: 'text', baseUrl: BASE }).text],
    ['html-to-text 10.0.1', () => libText(html)],
    ['ours (markdown)', () => htmlToText(html, { format: 'markdown', baseUrl: BASE }).text],
    ['turndown 7.2.5', () => turndown.turndown(html)],
  ];
  for (const [label, f] of runs) {
    const { ms, out } = time(f);
    const s = score(out, ref);
    const checks = CHECKS[name] ?? [];
    const passed = checks.filter((c) => c.re.test(out));
    const failed = checks.filter((c) => !c.re.test(out)).map((c) => c.what);
    rows.push(`| ${name} | ${label} | ${(s.recall * 100).toFixed(1)}% | ${s.leak} | ${(s.noise * 100).toFixed(1)}% | ${passed.length}/${checks.length}${failed.length ? ` (misses: ${failed.join('; ')})` : ''} | ${ms.toFixed(2)} | ${out.length} |`);
  }
}
console.log(rows.join('\n'));
