// One mapping of a kata-deploy values file under way: the file, what it sets of kata-install's
// values so far, the account of each key (ledger.ts), and the moves every part of the mapping
// makes (a key carried as it is, one dropped, a chart default recognised).
import { isDeepStrictEqual } from "node:util";
import type { Catalog } from "../../decide/catalog.js";
import type { InputIssue } from "../../input-error.js";
import { type ChartValues, chartDefaults } from "./chart.js";
import { Ledger } from "./ledger.js";
import type { ChartFile, Path } from "./read.js";

export type Table = Record<string, unknown>;

export function get(tree: unknown, path: Path): unknown {
  let at = tree;
  for (const part of path) at = at !== null && typeof at === "object" ? (at as Table)[part] : undefined;
  return at;
}

/** Sets a value by a path's parts (a handler name may hold what a dotted path cannot). */
export function setPath(tree: Table, parts: readonly string[], value: unknown): void {
  let at = tree;
  for (const part of parts.slice(0, -1)) {
    at[part] ??= {};
    at = at[part] as Table;
  }
  const last = parts.at(-1);
  if (last !== undefined) at[last] = value;
}

function mergeTrees(base: unknown, over: unknown): unknown {
  if (base === null || typeof base !== "object" || Array.isArray(base)) return over ?? base;
  if (over === null || typeof over !== "object" || Array.isArray(over)) return over ?? base;
  const out: Table = { ...(base as Table) };
  for (const [k, v] of Object.entries(over as Table)) out[k] = mergeTrees(out[k], v);
  return out;
}

/** Defaults under file values, as Helm merges maps (a list or scalar replaces): of their shape. */
export function merged<T>(base: T, over: T | undefined): T {
  return mergeTrees(base, over) as T;
}

export class Mapping {
  readonly ledger: Ledger;
  /** kata-install's values the file sets (merged over the defaults by the caller). */
  readonly overlay: Table = {};
  /** The keys not carried, with why: warnings. */
  readonly notes: InputIssue[] = [];

  constructor(
    readonly chart: ChartFile,
    readonly catalog: Catalog,
    /** Errors: the file maps to nothing. */
    readonly issues: InputIssue[],
  ) {
    this.ledger = new Ledger(chart);
  }

  private withDefaults?: ChartValues;

  /**
   * The file's values over the chart's defaults, as Helm coalesces a release's values over its
   * chart's: what `helm get values` gives (the user's only) maps as the whole of what the chart
   * rendered (`--all`) does.
   */
  get values(): ChartValues {
    this.withDefaults ??= merged(chartDefaults() as ChartValues, this.chart.values);
    return this.withDefaults;
  }

  /** Whether the file sets `path` or a key under it. */
  has(path: Path): boolean {
    return this.ledger.under(path).length > 0;
  }

  /** The value at `path`: the file's, else the chart's default. */
  value(path: Path): unknown {
    return get(this.values, path);
  }

  /** Sets one of kata-install's values, by its dotted key. */
  set(target: string, value: unknown): void {
    setPath(this.overlay, target.split("."), value);
  }

  /** A key that maps onto one kata-install value: as it is, or as `value` has it. */
  direct(path: Path, target: string, value: unknown = this.value(path)): void {
    // Left out of the file: the chart's default is what the chart rendered (nothing to account for).
    if (!this.has(path)) {
      if (value !== undefined) this.set(target, value);
      return;
    }
    this.set(target, value);
    this.ledger.carried(path, target);
  }

  /** Whether the file sets `path` to the chart's default `dflt`. */
  defaultOf(path: Path, dflt: unknown): boolean {
    return this.has(path) && isDeepStrictEqual(this.value(path), dflt);
  }

  /** A key kata-install has no use for: without effect when empty, else not carried, with why. */
  dropped(path: Path, why: string): void {
    if (this.value(path) === "" || this.value(path) === undefined) this.ledger.noEffect(path, "empty");
    else this.ledger.notCarried(path, why);
  }

  /** An error at `path`'s line. */
  issue(path: Path, message: string): void {
    this.issues.push({ file: this.chart.file, line: this.chart.lineOf(path), key: path.join("."), message });
  }

  /** A warning at `path`'s line; `key` when it says more than the path. */
  note(path: Path, message: string, key = path.join(".")): void {
    this.notes.push({ file: this.chart.file, line: this.chart.lineOf(path), key, message });
  }
}
