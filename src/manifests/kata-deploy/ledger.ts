// What became of each key of a kata-deploy values file: carried (and to what), not carried (and
// why: a warning), or without effect (as in the chart itself, or a chart default kata-install's own
// replaces). Every key the file sets must end up here once: `settle` says which were forgotten.
import type { InputIssue } from "../../input-error.js";
import type { ChartFile, Path } from "./read.js";

export type Status = "carried" | "not carried" | "no effect";

export interface Entry {
  key: string;
  line?: number;
  status: Status;
  /** Where it went (carried), or why not. */
  detail: string;
}

export class Ledger {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly chart: ChartFile) {}

  private mark(path: Path, status: Status, detail: string): void {
    const key = path.join(".");
    if (this.entries.has(key)) return; // the first account of a key stands
    this.entries.set(key, { key, line: this.chart.lineOf(path), status, detail });
  }

  /** The keys the file sets at or under `prefix`. */
  under(prefix: Path): Path[] {
    return this.chart.leaves.filter((leaf) => prefix.every((part, i) => leaf[i] === part));
  }

  carried(prefix: Path, to: string): void {
    for (const leaf of this.under(prefix)) this.mark(leaf, "carried", to);
  }

  notCarried(prefix: Path, why: string): void {
    for (const leaf of this.under(prefix)) this.mark(leaf, "not carried", why);
  }

  noEffect(prefix: Path, why: string): void {
    for (const leaf of this.under(prefix)) this.mark(leaf, "no effect", why);
  }

  /** Every key's account, in the file's order; a key nothing accounted for is a bug here. */
  settle(): Entry[] {
    const missing = this.chart.leaves.map((l) => l.join(".")).filter((k) => !this.entries.has(k));
    if (missing.length > 0) throw new Error(`kata-deploy values: no account of ${missing.join(", ")}`);
    return [...this.entries.values()].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  }

  /** The keys not carried, as warnings: one per key, or one per group of keys with the same why. */
  static notes(file: string, entries: Entry[]): InputIssue[] {
    const groups = new Map<string, Entry[]>();
    for (const e of entries.filter((e) => e.status === "not carried"))
      groups.set(e.detail, [...(groups.get(e.detail) ?? []), e]);
    return [...groups.entries()].map(([why, group]) => ({
      file,
      line: group[0]?.line,
      key: group.map((e) => e.key).join(", "),
      message: `not carried: ${why}`,
    }));
  }
}
