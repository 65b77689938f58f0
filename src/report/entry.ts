// One node of a report: its name and the summary it published (or its facts, summarised).
import type { NodeSummary } from "../kube/summary.js";

export interface NodeEntry {
  name: string;
  summary: NodeSummary;
}
