import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

describe('markdown from the model', () => {
  it('renders emphasis, lists, code and tables', () => {
    const html = renderMarkdown('**Done**: 3 files\n\n- a\n- b\n\n`x`\n\n| r | n |\n|---|---|\n| EU | 2 |');
    expect(html).toContain('<strong>Done</strong>');
    expect(html).toContain('<li>a</li>');
    expect(html).toContain('<code>x</code>');
    expect(html).toContain('<td>EU</td>');
  });

  it('never interprets raw HTML or script links', () => {
    const html = renderMarkdown('<img src=x onerror=alert(1)> [x](javascript:alert(1)) <script>alert(1)</script>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('href="javascript:');
  });

  it('opens links outside the app', () => {
    expect(renderMarkdown('[docs](https://example.com)')).toContain('target="_blank" rel="noopener noreferrer"');
  });
});
