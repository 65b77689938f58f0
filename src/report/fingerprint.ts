// Which facts can change a decision: every fact a rule reads (rules are data, so this is read off
// them, never listed by hand), and the few the decide stage reads itself. Nodes that agree on all
// of them get the same decision, so a report decides once per distinct set, not once per node —
// a cluster of 5,000 nodes is a handful of kinds of node.

import { factsRead } from "../decide/match.js";
import type { RuleSet } from "../decide/rules.js";
import type { SourceKey } from "../detect/sources.js";

/** Read by decide.ts directly, besides the rules (whole sources: a renamed one fails to compile). */
const ENGINE_FACTS: readonly SourceKey[] = ["arch", "runtime", "hypervisors"];

export function decisionFacts(rules: RuleSet): string[] {
  const paths = new Set<string>(ENGINE_FACTS);
  for (const rule of rules.rules) {
    for (const fact of factsRead(rule.match)) paths.add(fact);
    for (const keys of Object.values(rule.config))
      for (const value of Object.values(keys)) if ("fact" in value) paths.add(value.fact);
  }
  // Variables are computed from facts; a path inside a `some` collection is read per element.
  const plain = [...paths].filter((p) => !p.startsWith("vars."));
  return plain.filter((p) => !plain.some((q) => q !== p && p.startsWith(`${q}.`))).sort();
}

// The values of those facts on a node, as one comparable string: scan.ts's fingerprint (kept with
// the scan, which runs without the rules).
export { fingerprint } from "./scan.js";
