import type { PermissionMode } from '@fengyu/protocol';
import { decide, type HookVerdict } from './decide';
import { floorHit } from './floor';
import { type CallFacts, COMMAND_TOOL, type RuleSet } from './rules';
import { analyzeShell, type ShellAnalysis } from './shell';
import type { BashParser } from './shell-parser';
import type { GuardDecision } from './types';

/**
 * Analyses the command line of an `execute_command` call (when it is one) and decides.
 * Synchronous once the parser is loaded; shared by the guard, the dry-run route, the corpus
 * and the benchmark so they can never disagree.
 */
export function evaluateCall(
  parser: BashParser,
  input: { call: CallFacts; mode: PermissionMode; rules: RuleSet; hook?: HookVerdict },
): GuardDecision & { shell?: ShellAnalysis } {
  if (input.call.name !== COMMAND_TOOL) return decide(input);
  const command = input.call.arguments.command;
  const shell: ShellAnalysis =
    typeof command === 'string' ? safeAnalyze(parser, command) : { source: '', segments: [], opaque: ['"command" is not a string'], deviceWrites: [] };
  const floor = floorHit(shell);
  return { ...decide({ ...input, shell, ...(floor ? { floor } : {}) }), shell };
}

/** Analysis never throws: a failure (e.g. a grammar limit) makes the command opaque. */
function safeAnalyze(parser: BashParser, command: string): ShellAnalysis {
  try {
    return analyzeShell(parser, command);
  } catch (err) {
    return { source: command, segments: [], opaque: [`the command could not be analysed (${(err as Error).message})`], deviceWrites: [] };
  }
}
