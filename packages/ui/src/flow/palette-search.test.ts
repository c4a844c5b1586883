import { describe, expect, it } from 'vitest';
import { highlight, type Searchable, searchScore } from './palette-search';

const tools: Searchable[] = [
  { name: 'web_fetch', label: 'web_fetch', description: 'Fetch a web page and return its text (tags stripped), saving nothing', group: 'builtin' },
  { name: 'excel_split', label: 'Split workbook', description: 'Split an Excel workbook into one file per value of a column', group: 'plugin' },
  { name: 'email_tags_list', label: 'Recipient tags', description: 'List saved recipient tags', group: 'plugin', keywords: ['groups'] },
  { name: 'save_note', label: 'Save note', description: 'Save a note with a tag', group: 'builtin' },
];
const rank = (q: string) =>
  tools
    .map((t) => [t.name, searchScore(t, q)] as const)
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([n]) => n);

describe('palette search', () => {
  it('does not find a tool from letters scattered through its description', () => {
    expect(rank('tag save')[0]).toBe('save_note');
    expect(rank('tag save')).not.toContain('web_fetch');
    expect(rank('xlsplt')).toEqual([]);
  });

  it('needs every word and puts the name or label match first', () => {
    expect(rank('split')[0]).toBe('excel_split');
    expect(rank('excel split')).toEqual(['excel_split']);
    expect(rank('tags')[0]).toBe('email_tags_list');
  });

  it('searches keywords and word starts in names', () => {
    expect(rank('groups')).toEqual(['email_tags_list']);
    expect(rank('fetch')).toEqual(['web_fetch']);
  });

  it('matches everything for an empty query', () => {
    expect(rank('')).toHaveLength(tools.length);
  });

  it('highlights each word of the query', () => {
    expect(highlight('Split workbook', 'work split')).toEqual([
      { text: 'Split', hit: true },
      { text: ' ', hit: false },
      { text: 'work', hit: true },
      { text: 'book', hit: false },
    ]);
  });
});
