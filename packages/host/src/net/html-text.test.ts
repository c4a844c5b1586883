import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEntities, htmlToText } from './html-text';

const PAGE = `<!doctype html>
<html><head><title> The  Page &amp; Co </title>
<style>body { color: red }</style><script>var nav = "</nav><p>not text</p>";</script></head>
<body>
<nav><ul><li><a href="/home">Home</a></li><li>Menu item</li></ul></nav>
<h1>Main heading</h1>
<p>First   paragraph with a <a href="/docs/intro?x=1">relative link</a> and <b>bold</b>.</p>
<div hidden>secret hidden text</div>
<h2>Second</h2>
<ul><li>one</li><li>two <a href="https://example.org/">ext</a></li></ul>
<ol><li>alpha</li><li>beta</li></ol>
<pre>  keep   this
    indented</pre>
<p>caf&eacute; &#233; &#x4E2D;&#25991; &lt;tag&gt; &nbsp;end</p>
<a href="javascript:alert(1)">js link</a>
<!-- a comment with <p>markup</p> -->
<noscript>enable js</noscript>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
</body></html>`;

describe('htmlToText', () => {
  it('keeps title, headings, paragraphs and absolute links in markdown', () => {
    const { title, text } = htmlToText(PAGE, { format: 'markdown', baseUrl: 'https://site.test/a/b.html' });
    expect(title).toBe('The Page & Co');
    expect(text).toContain('# Main heading');
    expect(text).toContain('## Second');
    expect(text).toContain('First paragraph with a [relative link](https://site.test/docs/intro?x=1) and **bold**.');
    expect(text).toContain('- one\n- two [ext](https://example.org/)');
    expect(text).toContain('1. alpha\n2. beta');
    expect(text).toContain('```\n  keep   this\n    indented\n```');
    expect(text).toContain('js link');
    expect(text).not.toContain('javascript:');
  });

  it('drops script, style, nav, noscript, hidden elements and comments', () => {
    const { text } = htmlToText(PAGE, { format: 'text' });
    for (const gone of ['color: red', 'not text', 'Menu item', 'Home', 'secret hidden text', 'a comment', 'markup', 'enable js', 'The Page']) {
      expect(text).not.toContain(gone);
    }
  });

  it('renders plain text with links in parentheses and decoded entities', () => {
    const { text } = htmlToText(PAGE, { format: 'text', baseUrl: 'https://site.test/' });
    expect(text).toContain('Main heading\n\nFirst paragraph with a relative link (https://site.test/docs/intro?x=1) and bold.');
    expect(text).toContain('café é 中文 <tag> end');
    expect(text).toContain('| k | v\n| a | 1');
    expect(text).not.toMatch(/\n{3,}/);
  });

  it('decodes numeric entities safely', () => {
    expect(decodeEntities('&#0;&#xD800;&#x110000;&#65;&unknown;')).toBe('\uFFFD\uFFFD\uFFFDA&unknown;');
  });

  it('survives hostile markup: unclosed tags, stray brackets, unterminated script', () => {
    expect(htmlToText('<p>a < b > c<div', { format: 'text' }).text).toContain('a < b > c');
    expect(htmlToText('<p>before<script>never closed <p>x', { format: 'text' }).text).toBe('before');
    expect(htmlToText('<a href="x">unclosed link', { format: 'markdown', baseUrl: 'https://h.test/' }).text).toBe('unclosed link');
    expect(htmlToText('</a></li></ul></pre>text', { format: 'markdown' }).text).toBe('text');
    expect(htmlToText('<nav><nav>in</nav>still</nav>out', { format: 'text' }).text).toBe('out');
  });

  it('never throws and never emits markup-free input differently (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        const r = htmlToText(s, { format: 'markdown' });
        expect(typeof r.text).toBe('string');
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z ]{0,40}$/), (s) => {
        expect(htmlToText(s, { format: 'text' }).text).toBe(s.replace(/\s+/g, ' ').trim());
      }),
    );
  });
});
