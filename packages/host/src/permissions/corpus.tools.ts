import type { ToolEffect } from '@fengyu/protocol';
import { type CorpusCase, RULESETS, type SetName } from './corpus.sets';
import type { DecisionSource } from './types';

/** Non-command tools: Tool / Effect / Mcp / WebFetch rules. */
function call(name: string, effect: ToolEffect, source: string, args: Record<string, unknown> = {}, origin?: string) {
  return { name, effect, source, arguments: args, ...(origin ? { origin } : {}) };
}

const excelSplit = call('excel_split', 'write', 'plugin', {}, 'fan.summer.excel');
const excelAnalyze = call('excel_analyze', 'read', 'plugin', {}, 'fan.summer.excel');
const emailSend = call('email_send_batch', 'external', 'plugin', {}, 'fyp.email');
const ghCreate = call('github__create_issue', 'external', 'mcp', {}, 'github');
const ghDelete = call('github__delete_repo', 'external', 'mcp', {}, 'github');
const gitlab = call('gitlab__merge', 'external', 'mcp', {}, 'gitlab');
const fakeGh = call('github__create_issue', 'external', 'plugin', {}, 'evil.plugin');
const browser = call('browser_navigate', 'external', 'plugin');
const fetchUrl = (url: string) => call('web_fetch', 'external', 'builtin', { url });
const searchSite = (site?: string) => call('web_search', 'external', 'builtin', site ? { query: 'x', site } : { query: 'x' });

export type ToolRow = [tool: CorpusCase['tool'] & object, rules: SetName, expect: CorpusCase['expect'], source: DecisionSource, hostile?: boolean];

export const TOOLS: ToolRow[] = [
  [excelSplit, 'toolExcel', 'allow', 'allow'],
  [excelSplit, 'none', 'ask', 'mode'],
  [excelAnalyze, 'none', 'allow', 'mode'],
  [excelAnalyze, 'effRead', 'ask', 'ask'],
  [emailSend, 'toolExcel', 'ask', 'mode'],
  [emailSend, 'denyEmail', 'deny', 'deny'],
  [excelSplit, 'denyEmail', 'allow', 'allow'],
  [emailSend, 'askEmail', 'ask', 'ask'],
  [browser, 'askEmail', 'allow', 'allow'],
  [browser, 'effExternal', 'allow', 'allow'],
  [excelSplit, 'effExternal', 'ask', 'mode'],
  [ghCreate, 'mcpGlob', 'allow', 'allow'],
  [ghCreate, 'mcpShort', 'allow', 'allow'],
  [ghCreate, 'mcpOne', 'allow', 'allow'],
  [ghDelete, 'mcpOne', 'ask', 'mode'],
  [ghDelete, 'mcpShort', 'allow', 'allow'],
  [gitlab, 'mcpShort', 'ask', 'mode'],
  [gitlab, 'mcpGlob', 'ask', 'mode'],
  [fetchUrl('https://example.com/page'), 'webExample', 'allow', 'allow'],
  [fetchUrl('https://docs.example.com/page'), 'webExample', 'allow', 'allow'],
  [fetchUrl('https://other.org/'), 'webExample', 'ask', 'mode'],
  [fetchUrl('https://other.org/'), 'webAll', 'allow', 'allow'],
  [searchSite('example.com'), 'webExample', 'allow', 'allow'],
  [searchSite(), 'webExample', 'ask', 'mode'],
  [searchSite(), 'webAll', 'allow', 'allow'],
  [fetchUrl('https://evil.com/x'), 'webDenyEvil', 'deny', 'deny'],
  [fetchUrl('https://a.b.evil.com/x'), 'webDenyEvil', 'deny', 'deny'],
  [fetchUrl('https://good.org/x'), 'webDenyEvil', 'allow', 'allow'],
  [excelSplit, 'blanket', 'ask', 'mode'],
  [excelSplit, 'gitAll', 'ask', 'mode'],
  // hostile
  [excelSplit, 'denyAfterAllow', 'deny', 'deny', true],
  [call('myexcel_split', 'write', 'plugin'), 'toolExcel', 'ask', 'mode', true],
  [call('excel_split', 'write', 'plugin'), 'effRead', 'ask', 'mode', true],
  [fakeGh, 'mcpGlob', 'ask', 'mode', true],
  [fakeGh, 'mcpShort', 'ask', 'mode', true],
  [call('githubx__create', 'external', 'mcp', {}, 'githubx'), 'mcpShort', 'ask', 'mode', true],
  [fetchUrl('https://example.com.evil.net/'), 'webExample', 'ask', 'mode', true],
  [fetchUrl('https://evilexample.com/'), 'webExample', 'ask', 'mode', true],
  [fetchUrl('http://example.com@evil.net/'), 'webExample', 'ask', 'mode', true],
  [fetchUrl('not a url'), 'webExample', 'ask', 'mode', true],
  [call('web_fetch', 'external', 'builtin', {}), 'webExample', 'ask', 'mode', true],
  [fetchUrl('https://EVIL.com/x'), 'webDenyEvil', 'deny', 'deny', true],
  [fetchUrl('https://evil.com./x'), 'webDenyEvil', 'deny', 'deny', true],
  [fetchUrl('https://user:pw@evil.com:8443/x'), 'webDenyEvil', 'deny', 'deny', true],
  [call('web_fetch_proxy', 'external', 'plugin', { url: 'https://example.com' }), 'webExample', 'ask', 'mode', true],
  [call('execute_command', 'command', 'builtin', { command: 42 }), 'blanket', 'ask', 'floor', true],
];

export function toolCases(family: string, list: ToolRow[]): CorpusCase[] {
  return list.map(([tool, set, expect, source, hostile]) => ({ family, tool, rules: RULESETS[set], mode: 'ask' as const, expect, source, hostile: hostile === true }));
}

export { call, fetchUrl };
