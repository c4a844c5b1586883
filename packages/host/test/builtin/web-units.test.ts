import { describe, expect, it } from 'vitest';
import { decodeBody, isHtml } from '../../src/tools/builtin/web-fetch';
import { mapResults, searchUrl, WebSearchSettings } from '../../src/tools/builtin/web-search';

describe('web_fetch body decoding', () => {
  it('uses the declared charset, else a meta charset, else UTF-8', () => {
    const gbk = Buffer.from([0xc4, 0xe3, 0xba, 0xc3]); // 你好 in GBK
    expect(decodeBody(gbk, 'text/html; charset=gbk')).toBe('你好');
    expect(decodeBody(Buffer.concat([Buffer.from('<meta charset="gb2312">'), gbk]), 'text/html')).toBe('<meta charset="gb2312">你好');
    expect(decodeBody(Buffer.from('héllo'), 'text/plain')).toBe('héllo');
    expect(decodeBody(Buffer.from('x'), 'text/plain; charset=no-such-charset')).toBe('x');
  });

  it('recognizes HTML by type, or by content when no type is sent', () => {
    expect(isHtml('text/html', Buffer.from(''))).toBe(true);
    expect(isHtml('application/xhtml+xml; charset=utf-8', Buffer.from(''))).toBe(true);
    expect(isHtml('text/plain', Buffer.from('<html>'))).toBe(false);
    expect(isHtml('', Buffer.from('  <!DOCTYPE html><p>x'))).toBe(true);
  });
});

describe('web_search endpoint', () => {
  it('builds the SearXNG JSON URL from a base URL', () => {
    expect(searchUrl('http://127.0.0.1:8888', 'a b', 'en')).toBe('http://127.0.0.1:8888/search?q=a+b&format=json&language=en');
    expect(searchUrl('https://searx.example/base/', 'q')).toBe('https://searx.example/base/search?q=q&format=json');
    expect(searchUrl('https://searx.example/search', 'q&x=1')).toBe('https://searx.example/search?q=q%26x%3D1&format=json');
  });

  it('maps results, dropping malformed rows, up to the limit', () => {
    const json = { results: [{ url: 'https://a/', title: 'A', content: 'c' }, { url: 5 }, { url: 'data:x' }, { url: 'http://b/' }] };
    expect(mapResults(json, 10)).toEqual([
      { title: 'A', url: 'https://a/', snippet: 'c' },
      { title: 'http://b/', url: 'http://b/', snippet: '' },
    ]);
    expect(mapResults(json, 1)).toHaveLength(1);
    expect(() => mapResults({ nope: [] }, 1)).toThrow();
  });

  it('validates the settings section', () => {
    expect(WebSearchSettings.parse({ url: 'http://127.0.0.1:8888' })).toEqual({ provider: 'searxng', url: 'http://127.0.0.1:8888' });
    expect(WebSearchSettings.parse(null)).toBeNull();
    for (const bad of [{ url: 'ftp://x' }, { provider: 'bing', url: 'http://x' }, { url: 'http://x', extra: 1 }, {}]) {
      expect(WebSearchSettings.safeParse(bad).success).toBe(false);
    }
  });
});
