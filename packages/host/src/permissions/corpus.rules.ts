import type { Row } from './corpus.sets';
import { call, fetchUrl, type ToolRow } from './corpus.tools';

/** `Command(x y)` is a word-boundary prefix; the floor voids allow rules, never a deny rule. */
export const RULE_SEMANTICS: Row[] = [
  ['git status --short', 'gitStatus', 'allow', 'allow'],
  ['git status -- src', 'gitStatus', 'allow', 'allow'],
  ['ls -la', 'lsExact', 'allow', 'allow'],
  ['ls', 'lsExact', 'allow', 'allow'],
  ['npm test -- --watch', 'npmTest', 'allow', 'allow'],
  ['git statusx', 'gitStatus', 'ask', 'mode'],
  ['git status; rm x', 'gitStatus', 'ask', 'floor'],
  ['git status && make', 'gitStatus', 'ask', 'mode'],
  ['git status | sh', 'gitStatus', 'ask', 'floor'],
  ['git status$(rm x)', 'gitStatus', 'ask', 'floor'],
  ['git status`id`', 'gitStatus', 'ask', 'floor'],
  ['git "status; rm x"', 'gitStatus', 'ask', 'mode'],
  ['git status\u00a0--short', 'gitStatus', 'ask', 'mode'],
  ['git st', 'gitStatus', 'ask', 'mode'],
  ['git', 'gitStatus', 'ask', 'mode'],
  ['gitstatus', 'gitStatus', 'ask', 'mode'],
  ['lsx', 'lsExact', 'ask', 'mode'],
  ['ls; rm -rf /', 'lsExact', 'ask', 'floor'],
  ['ls && curl x | sh', 'lsExact', 'ask', 'floor'],
  ['/tmp/ls -la', 'lsExact', 'ask', 'mode'],
  ['npm testx', 'npmTest', 'ask', 'mode'],
  ['npm test; npm publish', 'npmTest', 'ask', 'mode'],
  ['echo x | xargs npm', 'npmTest', 'ask', 'mode'],
  // a deny rule wins over the floor (and over opaque lines it can name)
  ['rm x', 'denyRmExact', 'deny', 'deny'],
  ['rm -rf /', 'denyRmExact', 'deny', 'deny'],
  ['rm -rf /', 'denyRmExact', 'deny', 'deny', 'F'],
  ['rm -rf /', 'denyRmExact', 'deny', 'deny', 'A'],
  ['env rm x', 'denyRmExact', 'deny', 'deny'],
  ['env -i rm x', 'denyRmOnly', 'deny', 'deny'],
  ['sudo rm x', 'denyRmExact', 'deny', 'deny'],
  ['/bin/rm x', 'denyRmExact', 'deny', 'deny'],
  ['timeout 5 rm x', 'denyRmExact', 'deny', 'deny'],
  ['echo $((x)); rm x', 'denyRmExact', 'deny', 'deny'],
  ['rm $(( $(id) ))', 'denyRmExact', 'deny', 'deny'],
  ['git push', 'gitDenyPush', 'deny', 'deny', 'F'],
  ['xargs rm', 'denyRmExact', 'deny', 'deny'],
  ['rmdir x', 'denyRmExact', 'allow', 'allow'],
];

const search = (args: Record<string, unknown>) => call('web_search', 'external', 'builtin', { query: 'x', ...args });

/** Domain deny rules match when ANY host involved matches; allow rules need EVERY host inside. */
export const WEB_RULES: ToolRow[] = [
  [fetchUrl('https://evil.com/'), 'webDenyAny', 'deny', 'deny', true],
  [fetchUrl('https://cdn.evil.com/x'), 'webDenyAny', 'deny', 'deny', true],
  [fetchUrl('https://good.org/r?next=https://evil.com/x'), 'webDenyAny', 'deny', 'deny', true],
  [fetchUrl('https://good.org/r?next=https%3A%2F%2Fevil.com%2Fx'), 'webDenyAny', 'deny', 'deny', true],
  [fetchUrl('https://good.org/r?u=%2F%2Fa.evil.com'), 'webDenyAny', 'deny', 'deny', true],
  [fetchUrl('https://good.org/#https://evil.com'), 'webDenyAny', 'deny', 'deny', true],
  [search({ domains: ['good.org', 'evil.com'] }), 'webDenyAny', 'deny', 'deny', true],
  [search({ site: 'good.org', domain: 'x.evil.com' }), 'webDenyAny', 'deny', 'deny', true],
  [search({ site: 'EVIL.COM.' }), 'webDenyAny', 'deny', 'deny', true],
  [search({ domains: ['good.org', 'other.net'] }), 'webAllowGood', 'ask', 'mode', true],
  [fetchUrl('https://good.org.evil.com/'), 'webAllowGood', 'ask', 'mode', true],
  [fetchUrl('https://evil.com/good.org'), 'webAllowGood', 'ask', 'mode', true],
  [fetchUrl('https://good.org/'), 'webDenyAny', 'allow', 'allow'],
  [fetchUrl('https://docs.good.org/page?q=evil'), 'webDenyAny', 'allow', 'allow'],
  [fetchUrl('https://notevil.com/'), 'webDenyAny', 'ask', 'mode'],
  [search({ domains: ['good.org', 'api.good.org'] }), 'webAllowGood', 'allow', 'allow'],
];
