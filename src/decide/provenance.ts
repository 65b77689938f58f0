import type { Overrides } from "./overrides.js";
import type { Rule } from "./rules.js";

// Every decided value says where it came from and what it beat. Precedence, lowest first: the
// release's own configuration (and the capability table) < rules (by priority) < kata-deploy's
// environment < the overrides file < command-line flags; on a takeover, what kata-deploy wrote
// comes just below the environment (what its environment made) or just below the overrides file
// (the admin's dropIn).

export type Source =
  | { kind: "default"; name: string }
  | { kind: "rule"; name: string; file: string; why: string; priority: number }
  | { kind: "env"; name: string }
  /** `nodePath`: the node's own overrides file, by its path there (Overrides.nodePath). */
  | { kind: "overrides"; name: string; file: string; line?: number; nodePath?: string }
  | { kind: "flag"; name: string }
  | { kind: "derived"; name: string; from: Source }
  /**
   * What kata-deploy wrote on a node kata-install takes over, carried as the decision it was:
   * `over` "environment" for what kata-deploy's environment made (a proxy, debug), below the
   * environment kata-install runs with; "overrides" for the admin's own (the chart's dropIn), above
   * it and below the overrides file.
   */
  | { kind: "carried"; name: string; file: string; over: "environment" | "overrides" };

export interface Decided<T> {
  value: T;
  source: Source;
  /** What it won over, strongest first. */
  beaten: Array<{ value: T; source: Source }>;
}

const RANK: Record<Source["kind"], number> = {
  default: 0,
  rule: 1,
  env: 2,
  overrides: 3,
  flag: 4,
  derived: -1,
  carried: -1,
};

export function rank(source: Source): [number, number] {
  if (source.kind === "derived") return rank(source.from);
  if (source.kind === "carried") return [source.over === "overrides" ? 2.5 : 1.5, 0];
  return [RANK[source.kind], source.kind === "rule" ? source.priority : 0];
}

/** Whether `a` beats `b`; equal ranks keep the first one offered (rules are offered in a fixed order). */
function beats(a: Source, b: Source): boolean {
  const [ra, pa] = rank(a);
  const [rb, pb] = rank(b);
  return ra > rb || (ra === rb && pa > pb);
}

/** Candidates for one value, resolved by precedence. */
export class Ladder<T> {
  private readonly offers: Array<{ value: T; source: Source }> = [];

  offer(value: T, source: Source): void {
    this.offers.push({ value, source });
  }

  get empty(): boolean {
    return this.offers.length === 0;
  }

  resolve(): Decided<T> | undefined {
    if (this.offers.length === 0) return undefined;
    let winner = this.offers[0] as { value: T; source: Source };
    for (const offer of this.offers.slice(1)) if (beats(offer.source, winner.source)) winner = offer;
    const beaten = this.offers
      .filter((o) => o !== winner)
      .sort((a, b) => (beats(a.source, b.source) ? -1 : beats(b.source, a.source) ? 1 : 0));
    return { value: winner.value, source: winner.source, beaten };
  }
}

/** "rule use-distro-qemu (rules/hypervisors.toml)", "overrides file /etc/…:12", "SHIMS_X86_64". */
export function describeSource(source: Source): string {
  switch (source.kind) {
    case "default":
      return source.name;
    case "rule":
      return `rule ${source.name} (${source.file})`;
    case "env":
      return `environment ${source.name}`;
    case "overrides":
      return `overrides ${source.file}${source.line !== undefined ? `:${source.line}` : ""} ${source.name}`;
    case "flag":
      return `flag ${source.name}`;
    case "derived":
      return `${source.name}, from ${describeSource(source.from)}`;
    case "carried":
      return source.name;
  }
}

/**
 * describeSource() for a comment in a file written on the node: the node's own overrides file by
 * its path there, not where this run found it (/host/etc/…): the same decisions, the same bytes.
 */
export function describeSourceOnNode(source: Source): string {
  if (source.kind === "overrides" && source.nodePath !== undefined)
    return describeSource({ ...source, file: source.nodePath });
  if (source.kind === "derived") return `${source.name}, from ${describeSourceOnNode(source.from)}`;
  return describeSource(source);
}

export function isOverride(source: Source): boolean {
  return rank(source)[0] >= RANK.env;
}

/**
 * Kernel parameters the environment gives (proxies; kata-deploy's, carried) are added after the
 * release's, never in their place: the guest needs the release's own to boot.
 */
export function addsToKernelParams(key: string, source: Source): boolean {
  return (
    key.endsWith(".kernel_params") &&
    (source.kind === "env" || (source.kind === "carried" && source.over === "environment"))
  );
}

/** What the capability table (src/shims/table.ts) says of a shim. */
export const CAPABILITY_TABLE: Source = { kind: "default", name: "capability table (src/shims/table.ts)" };

export function ruleSource(rule: Rule): Source {
  return { kind: "rule", name: rule.name, file: rule.file, why: rule.why, priority: rule.priority };
}

export function overridesSource(overrides: Overrides, path: Array<string | number>, name: string): Source {
  return {
    kind: "overrides",
    name,
    file: overrides.file,
    line: overrides.lineOf(path),
    ...(overrides.nodePath !== undefined ? { nodePath: overrides.nodePath } : {}),
  };
}
