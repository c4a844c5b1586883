/**
 * A small HTML → readable text / markdown converter for `web_fetch` (pure, no dependencies).
 * Drops script, style, nav and other non-content elements; keeps the title, headings,
 * paragraphs, list items, table cells, preformatted blocks and links (made absolute).
 * It does not build a DOM: a single tokenizing pass with a tiny element stack is enough for
 * readable output and is linear in the input size.
 */

export type TextFormat = 'text' | 'markdown';

export interface HtmlText {
  title: string;
  text: string;
}

const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'nav', 'iframe', 'object', 'canvas', 'select', 'head']);
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp']);
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
const BLOCK = new Set([
  'p', 'div', 'section', 'article', 'main', 'header', 'footer', 'aside', 'address', 'blockquote', 'figure', 'figcaption',
  'ul', 'ol', 'dl', 'dt', 'dd', 'table', 'thead', 'tbody', 'tfoot', 'form', 'fieldset', 'details', 'summary', 'body', 'html',
]);
const LINE = new Set(['li', 'tr', 'caption']);

const ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ensp: ' ', emsp: ' ', thinsp: ' ', shy: '', zwj: '', zwnj: '',
  copy: '©', reg: '®', trade: '™', hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”',
  sbquo: '‚', bdquo: '„', laquo: '«', raquo: '»', bull: '•', middot: '·', deg: '°', times: '×', divide: '÷', para: '¶',
  sect: '§', euro: '€', pound: '£', yen: '¥', cent: '¢', plusmn: '±', frac12: '½', frac14: '¼', frac34: '¾', larr: '←',
  rarr: '→', uarr: '↑', darr: '↓', hearts: '♥', dagger: '†', permil: '‰', prime: '′', iexcl: '¡', iquest: '¿',
};

// Latin-1 (U+00A0–U+00FF) in code point order; names are case-sensitive (Eacute ≠ eacute).
const LATIN1 =
  'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para ' +
  'middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute ' +
  'Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute ' +
  'THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ' +
  'ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml';
LATIN1.split(' ').forEach((name, i) => {
  ENTITIES[name] ??= String.fromCharCode(0xa0 + i);
});

export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z][a-z0-9]*);?/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\uFFFD';
    }
    const named = ENTITIES[body] ?? ENTITIES[body.toLowerCase()];
    return named ?? whole;
  });
}

const TOKEN = /<!--[\s\S]*?(?:-->|$)|<![^>]*>|<\?[^>]*>|<\/?([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>|[^<]+|</g;
const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

function attributes(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of raw.matchAll(ATTR)) out[(m[1] as string).toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  return out;
}

function absolute(href: string, base: string | undefined): string | null {
  const h = href.trim();
  if (!h || h.startsWith('#') || /^(javascript|data|vbscript):/i.test(h)) return null;
  try {
    return base ? new URL(h, base).href : new URL(h).href;
  } catch {
    return h;
  }
}

/** Accumulates output; blocks are separated by blank lines, preformatted text is kept apart. */
class Out {
  parts: string[] = [];
  pre: string[] = [];
  push(s: string): void {
    this.parts.push(s);
  }
  /** A line (1) or paragraph (2) break; adjacent breaks merge into the larger one. */
  brk(n: 1 | 2): void {
    const last = this.parts[this.parts.length - 1];
    if (last === '\n\n' || (last === '\n' && n === 1)) return;
    if (last === '\n') this.parts[this.parts.length - 1] = '\n\n';
    else this.parts.push(n === 2 ? '\n\n' : '\n');
  }
  since(mark: number): string {
    return this.parts.splice(mark).join('');
  }
  finish(): string {
    const joined = this.parts.join('').replace(/[ \t\r\f\v\u00a0]+/g, ' ');
    const lines = joined.split('\n').map((l) => l.trim());
    const text = lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
    return text.replace(/\u0000(\d+)\u0000/g, (_, i: string) => this.pre[Number(i)] ?? '');
  }
}

export function htmlToText(html: string, opts: { format: TextFormat; baseUrl?: string }): HtmlText {
  const md = opts.format === 'markdown';
  const out = new Out();
  let title = '';
  let skip: { tag: string; depth: number } | null = null;
  let preDepth = 0;
  let preMark = 0;
  const links: Array<{ mark: number; href: string | null }> = [];
  const lists: Array<{ ordered: boolean; n: number }> = [];

  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(html); m; m = TOKEN.exec(html)) {
    const tok = m[0];
    const tag = m[1]?.toLowerCase();
    if (!tag) {
      if (skip || tok.startsWith('<!') || tok.startsWith('<?')) continue;
      const text = decodeEntities(tok);
      out.push(preDepth > 0 ? text : text.replace(/\s+/g, ' '));
      continue;
    }
    const closing = tok[1] === '/';
    if (!closing && RAW_TEXT.has(tag)) {
      // Raw text elements end at the first matching end tag, whatever they contain.
      const endTag = new RegExp(`</${tag}[\\s/>]`, 'gi');
      endTag.lastIndex = TOKEN.lastIndex;
      const end = endTag.exec(html)?.index ?? -1;
      const body = html.slice(TOKEN.lastIndex, end < 0 ? html.length : end);
      TOKEN.lastIndex = end < 0 ? html.length : html.indexOf('>', end) + 1 || html.length;
      if (tag === 'title' && !title) title = decodeEntities(body).replace(/\s+/g, ' ').trim();
      else if (tag === 'textarea' && !skip) out.push(decodeEntities(body));
      continue;
    }
    if (skip) {
      if (tag === skip.tag && !VOID.has(tag)) skip.depth += closing ? -1 : tok.endsWith('/>') ? 0 : 1;
      if (skip.depth === 0) skip = null;
      continue;
    }
    if (!closing && SKIP.has(tag) && !tok.endsWith('/>')) {
      skip = { tag, depth: 1 };
      continue;
    }
    const attrs = closing ? {} : attributes(m[2] ?? '');
    if (!closing && ('hidden' in attrs || attrs['aria-hidden'] === 'true') && !VOID.has(tag)) {
      skip = { tag, depth: 1 };
      continue;
    }
    onTag(tag, closing, attrs);
  }
  return { title, text: out.finish() };

  function onTag(tag: string, closing: boolean, attrs: Record<string, string>): void {
    const heading = /^h([1-6])$/.exec(tag);
    if (heading) {
      out.brk(2);
      if (!closing && md) out.push(`${'#'.repeat(Number(heading[1]))} `);
      return;
    }
    if (tag === 'br') return out.brk(1);
    if (tag === 'hr') return out.push(md ? '\n\n---\n\n' : '\n\n');
    if (tag === 'pre') return onPre(closing);
    if (tag === 'a') return onLink(closing, attrs);
    if (tag === 'img') {
      const alt = (attrs.alt ?? '').trim();
      if (alt) out.push(md && attrs.src ? `![${alt}](${absolute(attrs.src, opts.baseUrl) ?? ''})` : alt);
      return;
    }
    if (tag === 'ul' || tag === 'ol') {
      if (closing) lists.pop();
      else lists.push({ ordered: tag === 'ol', n: 0 });
      return out.brk(2);
    }
    if (tag === 'li') {
      out.brk(1);
      if (closing) return;
      const list = lists[lists.length - 1];
      const indent = '  '.repeat(Math.max(0, lists.length - 1));
      if (list?.ordered) out.push(`${indent}${++list.n}. `);
      else out.push(`${indent}- `);
      return;
    }
    if (tag === 'td' || tag === 'th') {
      if (!closing) out.push(' | ');
      return;
    }
    if ((tag === 'strong' || tag === 'b') && md) return out.push('**');
    if ((tag === 'em' || tag === 'i') && md) return out.push('_');
    if (tag === 'code' && md && preDepth === 0) return out.push('`');
    if (LINE.has(tag)) return out.brk(1);
    if (BLOCK.has(tag)) out.brk(2);
  }

  function onPre(closing: boolean): void {
    if (!closing) {
      if (preDepth++ === 0) {
        out.brk(2);
        preMark = out.parts.length;
      }
      return;
    }
    if (preDepth === 0 || --preDepth > 0) return;
    const body = out.since(preMark).replace(/^\n/, '').replace(/\s+$/, '');
    out.pre.push(md ? `\`\`\`\n${body}\n\`\`\`` : body);
    out.push(`\u0000${out.pre.length - 1}\u0000`);
    out.brk(2);
  }

  function onLink(closing: boolean, attrs: Record<string, string>): void {
    if (!closing) {
      links.push({ mark: out.parts.length, href: attrs.href ? absolute(attrs.href, opts.baseUrl) : null });
      return;
    }
    const link = links.pop();
    if (!link) return;
    const label = out.since(link.mark).replace(/\s+/g, ' ').trim();
    if (!link.href) return out.push(label);
    if (md) out.push(label ? `[${label}](${link.href})` : `<${link.href}>`);
    else out.push(label && label !== link.href ? `${label} (${link.href})` : link.href);
  }
}
