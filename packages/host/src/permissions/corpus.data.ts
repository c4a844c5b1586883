import { HAPPY } from './corpus.benign';
import { HOSTILE } from './corpus.chains';
import { HIDDEN_CODE } from './corpus.hidden';
import { GIT_EXEC, WRAPPED } from './corpus.programs';
import { EXEC_OPAQUE, EXEC_WRAPPERS } from './corpus.wrappers';
import { RULE_SEMANTICS, WEB_RULES } from './corpus.rules';
import { type CorpusCase, rows } from './corpus.sets';
import { TOOLS, toolCases } from './corpus.tools';

export type { CorpusCase } from './corpus.sets';

/**
 * The permission corpus, assembled from one data file per family. Every hostile case must not
 * be allowed; the benign ones (and the near misses inside hostile families) must stay allowed,
 * so a guard that refuses everything fails as surely as one that allows everything.
 */
export const CORPUS: CorpusCase[] = [
  ...rows('benign', false, HAPPY),
  ...rows('chains and the floor', true, HOSTILE),
  ...rows('hidden code in expansions', true, HIDDEN_CODE),
  ...rows('git exec features', true, GIT_EXEC),
  ...rows('programs that run programs', true, WRAPPED),
  ...rows('wrappers that exec their arguments', true, [...EXEC_WRAPPERS, ...EXEC_OPAQUE]),
  ...rows('rule semantics', true, RULE_SEMANTICS),
  ...toolCases('tools', TOOLS),
  ...toolCases('web any-host deny', WEB_RULES),
];
