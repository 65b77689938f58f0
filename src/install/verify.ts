// Every file a shim's configuration names is there: the check that stops an install from calling a
// Kata that cannot boot a success. For each shim, the configuration is read as Kata reads it (the
// base file, then config.d/ in order, later files winning) and each path it names — hypervisor,
// kernel, image or initrd, firmware, virtiofsd, jailer, guest extension images — with the runtime
// handler's shim binary and ConfigPath, must reach a regular file inside the host root (links
// followed inside it), executable where it is a program. Checked twice: in the plan, against the
// files the artifacts being installed hold (their listings, nothing pulled) or the node's; and
// after the switch, against the node itself.
import fs from "node:fs";
import path from "node:path";
import { type ListedEntry, ReleaseTree } from "../artifacts/listing.js";
import type { ArtifactSource } from "../artifacts/source.js";
import type { Changeset } from "../changeset.js";
import type { Catalog } from "../decide/catalog.js";
import type { Check, Decision } from "../decide/decision.js";
import { handlersFor, installDir } from "../decide/layout.js";
import type { Host } from "../host/host.js";
import { ownPath } from "../host/own-place.js";
import { LINKS } from "../release/links.js";
import { type NamedPath, pathsIn } from "../release/named-paths.js";
import type { Release } from "../release/release.js";
import {
  checkedName,
  type EffectiveConfig,
  effectiveConfigs,
  kataConfigChecks,
} from "../render/effective-config.js";

export const CHECK_ID = "artifact-paths";

/** What a host path reaches: a regular file and its mode, or why not. */
export type Found = { ok: true; mode: number } | { ok: false; why: string };

export interface PathWorld {
  find(hostPath: string): Promise<Found>;
}

/**
 * Every path the decision's shims and handlers name, in their configurations as Kata will load
 * them; `refused`: what Kata would refuse of those configurations (the plan says it as a check of
 * its own, kata-config; the install after its switch as a failure).
 */
export async function namedPaths(
  host: Host,
  decision: Decision,
  changeset: Changeset,
  catalog: Catalog,
  release: Release | null = null,
): Promise<{ paths: NamedPath[]; problems: string[]; configs: EffectiveConfig[] }> {
  const configs = await effectiveConfigs(host, decision, changeset, catalog, release);
  const paths: NamedPath[] = [];
  const problems: string[] = [];
  for (const c of configs)
    if (c.base === null) problems.push(`${c.name}: its configuration is neither planned nor on the node`);
  for (const handler of handlersFor(decision, catalog)) {
    const name = checkedName(handler);
    paths.push(...pathsIn(name, configs.find((c) => c.name === name)?.config ?? {}));
    paths.push({ shim: name, key: "handler shim binary", path: handler.runtimePath, program: true });
    paths.push({ shim: name, key: "handler ConfigPath", path: handler.configPath, program: false });
  }
  return { paths, problems, configs };
}

/** What Kata would refuse of the configurations, one line each. */
export function refusedOf(configs: readonly EffectiveConfig[]): string[] {
  return configs.flatMap((c) =>
    c.refusals.map((r) => `Kata would refuse ${c.name}'s configuration: ${r.file}: ${r.reason}`),
  );
}

/** The node as it is: a path followed through links inside the host root. */
export function nodeWorld(host: Host): PathWorld {
  return {
    async find(hostPath) {
      let real: string;
      try {
        real = await host.resolve(hostPath);
      } catch (error) {
        return { ok: false, why: (error as Error).message };
      }
      let st: fs.Stats;
      try {
        st = fs.statSync(real);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        return {
          ok: false,
          why: code === "ENOENT" ? "not on the node (or a link to nothing)" : `cannot be read (${code})`,
        };
      }
      if (!st.isFile()) return { ok: false, why: "not a regular file" };
      return { ok: true, mode: st.mode & 0o7777 };
    },
  };
}

/**
 * The node once the plan is applied: files the plan writes; under the prefix's links into
 * `current`, the files of the version being installed (`tree`, from the artifacts' listings);
 * anything else as the node has it (a distro qemu, the admin's files).
 */
export function plannedWorld(
  host: Host,
  decision: Decision,
  changeset: Changeset,
  tree: ReleaseTree,
): PathWorld {
  const node = nodeWorld(host);
  const prefix = installDir(decision);
  return withPlanned(changeset, {
    async find(hostPath) {
      if (hostPath.startsWith(`${prefix}/`)) {
        const rel = path.posix.normalize(hostPath.slice(prefix.length + 1));
        if (LINKS.some((l) => rel === l || rel.startsWith(`${l}/`))) {
          const reached = tree.reach(rel);
          if (reached.kind === "file") return { ok: true, mode: reached.mode };
          if (reached.kind === "loop") return { ok: false, why: "a loop of links in the artifacts" };
          return { ok: false, why: `in none of the artifacts being installed (${reached.path} is missing)` };
        }
      }
      return node.find(hostPath);
    },
  });
}

/** `world`, with the plan's own writes and removals over it. */
export function withPlanned(changeset: Changeset, world: PathWorld): PathWorld {
  const planned = new Map(changeset.changes.map((c) => [c.path, c]));
  return {
    async find(hostPath) {
      const change = planned.get(hostPath);
      if (change === undefined || change.link) return world.find(hostPath);
      return change.after === null
        ? { ok: false, why: "removed by the plan" }
        : { ok: true, mode: change.mode };
    },
  };
}

export interface PathFailure extends NamedPath {
  why: string;
}

export async function findFailures(paths: NamedPath[], world: PathWorld): Promise<PathFailure[]> {
  const out: PathFailure[] = [];
  for (const p of paths) {
    const found = await world.find(p.path);
    if (!found.ok) out.push({ ...p, why: found.why });
    else if (p.program && (found.mode & 0o111) === 0) out.push({ ...p, why: "not executable" });
  }
  return out;
}

export function describeFailures(failures: PathFailure[]): string {
  return failures.map((f) => `${f.shim}: ${f.key} = ${f.path}: ${f.why}`).join("; ");
}

/** The plan's check: passed, or failed naming each path and its shim. */
export function pathsCheck(
  failures: PathFailure[],
  problems: string[],
  checked: number,
  where: string,
): Check {
  const missing = failures.map((f) => `${f.shim}: ${f.key} = ${f.path}: ${f.why}`);
  // A drop-in Kata could not load is said as that, not as a missing path.
  const parts = [
    ...(problems.length > 0
      ? [`${problems.length} configuration file(s) Kata could not load (${where}): ${problems.join("; ")}`]
      : []),
    ...(missing.length > 0
      ? [
          `${missing.length} path(s) the shims' configurations name would not be there (${where}): ${missing.join("; ")}`,
        ]
      : []),
  ];
  return parts.length === 0
    ? {
        id: CHECK_ID,
        severity: "error",
        status: "pass",
        message: `every file the shims' configurations name is there (${checked} paths, ${where})`,
        rule: "verify",
      }
    : {
        id: CHECK_ID,
        severity: "error",
        status: "fail",
        message: parts.join("; and "),
        hint: "a Kata that cannot find its kernel, image or hypervisor cannot start a pod: install the missing artifact, or fix the overrides that name the file",
        rule: "verify",
      };
}

/**
 * A takeover keeps every handler kata-deploy served: a path its configuration names outside Kata's
 * directory (a host's own kernel, as clh-azure's /usr/share/cloud-hypervisor/vmlinux.bin) that is not
 * on this node was not there under kata-deploy either, and that handler ran no pod before: kept as
 * it was, with a warning, rather than a refusal that would stop the whole switch at this node.
 */
export function keptOnTakeover(
  failures: PathFailure[],
  decision: Decision,
  changeset: Changeset,
  /** The node was kata-deploy's: now (its facts), or until a takeover still carried in the journal. */
  wasKataDeploys = false,
): { kept: PathFailure[]; rest: PathFailure[]; check: Check | null } {
  const prefix = installDir(decision);
  const takingOver = wasKataDeploys || changeset.actions.some((a) => a.kind === "take-over");
  const outside = (f: PathFailure) =>
    takingOver && !f.path.startsWith(`${prefix}/`) && f.key !== "handler shim binary";
  const kept = failures.filter(outside);
  return {
    kept,
    rest: failures.filter((f) => !outside(f)),
    check:
      kept.length === 0
        ? null
        : {
            id: "takeover-host-paths",
            severity: "warning",
            status: "fail",
            message: `kata-deploy's configurations name files of the host that are not on this node, so these handlers ran no pod here before either; kept as they were: ${kept.map((f) => `${f.shim}: ${f.key} = ${f.path}`).join("; ")}`,
            hint: "put the file there (a host image such a shim expects), or drop the shim with the overrides file's shims = [...]",
            rule: "verify",
          },
  };
}

/** Whether the node is kata-deploy's, or was until a takeover of kata-install's (carried in its journal). */
export function wasTakenOver(facts: { kata: { managedBy: string | null; carried?: unknown } }): boolean {
  return facts.kata.managedBy === "kata-deploy" || facts.kata.carried !== undefined;
}

/** How many bytes a node pulls, against the whole release the source holds. */
export interface Transfer {
  bytes: number;
  releaseBytes: number;
  images: number;
  releaseImages: number;
  /** The artifacts taken from the installed version instead (the same digest), when any. */
  reused?: { images: number; bytes: number; version: string };
}

/** What `names` pull of the release; those `reused` names are counted as taken from the node. */
export async function transferOf(
  source: ArtifactSource,
  names: string[],
  all: string[],
  reused: { version: string | null; artifacts: ReadonlySet<string> } = NOTHING_REUSED,
): Promise<Transfer> {
  const sizes = await source.sizes(all);
  const present = names.filter((n) => sizes.has(n));
  const mine = present.filter((n) => !reused.artifacts.has(n));
  const kept = present.filter((n) => reused.artifacts.has(n));
  const sum = (list: string[]) => list.reduce((n, a) => n + (sizes.get(a) ?? 0), 0);
  return {
    bytes: sum(mine),
    releaseBytes: [...sizes.values()].reduce((n, b) => n + b, 0),
    images: mine.length,
    releaseImages: sizes.size,
    ...(kept.length > 0 && reused.version !== null
      ? { reused: { images: kept.length, bytes: sum(kept), version: reused.version } }
      : {}),
  };
}

export const NOTHING_REUSED = { version: null, artifacts: new Set<string>() } as const;

/**
 * The plan's `artifact-paths` check, added to the decision. With pulls planned, paths under the
 * prefix are checked against the listings of the artifacts to install (needs the source; without
 * one an install refuses anyway). With none, against the node: a file removed by hand that the
 * source still has becomes a repair pull of its artifact, shown in the plan like any other.
 */
export async function verifyPlanned(
  planned: {
    decision: Decision;
    changeset: Changeset;
    host: Host;
    catalog: Catalog;
    release?: Release | null;
    facts?: { kata: { managedBy: string | null; carried?: unknown } };
  },
  source: ArtifactSource | null,
  allArtifacts: string[],
  reused: { version: string | null; artifacts: ReadonlySet<string> } = NOTHING_REUSED,
): Promise<void> {
  const { decision, changeset, host, catalog } = planned;
  if (decision.shims.length === 0) return;
  const wasKataDeploys = planned.facts !== undefined && wasTakenOver(planned.facts);
  const names = decision.artifacts.filter((a) => a.from === "bundled").map((a) => a.name);
  const pulls = changeset.actions.filter((a) => a.kind === "pull-artifact");
  const { paths, problems, configs } = await namedPaths(
    host,
    decision,
    changeset,
    catalog,
    planned.release ?? null,
  );
  // What Kata would make of each configuration: refused (an admin's drop-in it cannot take), or
  // read and ignored.
  decision.checks.push(...kataConfigChecks(configs));
  const listings = async () => {
    const byArtifact = new Map<string, ListedEntry[]>();
    for (const name of names) byArtifact.set(name, await (source as ArtifactSource).list(name));
    return byArtifact;
  };
  if (pulls.length > 0) {
    if (source === null) return;
    const tree = new ReleaseTree((await listings()).values());
    const found = keptOnTakeover(
      await findFailures(paths, plannedWorld(host, decision, changeset, tree)),
      decision,
      changeset,
      wasKataDeploys,
    );
    if (found.check !== null) decision.checks.push(found.check);
    decision.checks.push(
      pathsCheck(
        found.rest,
        problems,
        paths.length,
        `against the files of ${names.length} artifacts in ${source.description}`,
      ),
    );
    changeset.transfer = await transferOf(source, names, allArtifacts, reused);
    return;
  }
  // The node as it is, with the files this plan writes (a new handler's configuration) counted.
  const found = keptOnTakeover(
    await findFailures(paths, withPlanned(changeset, nodeWorld(host))),
    decision,
    changeset,
    wasKataDeploys,
  );
  if (found.check !== null) decision.checks.push(found.check);
  let failures = found.rest;
  if (failures.length > 0 && source !== null) {
    // What the source's copy of this version holds can be put back: a repair, not a refusal.
    const byArtifact = await listings();
    const tree = new ReleaseTree(byArtifact.values());
    const prefix = installDir(decision);
    const version = await installedVersionDir(host, prefix);
    const repairs = new Map<string, string[]>();
    failures = failures.filter((f) => {
      if (!f.path.startsWith(`${prefix}/`)) return true;
      const rel = f.path.slice(prefix.length + 1);
      const reached = tree.reach(rel);
      if (!LINKS.some((l) => rel === l || rel.startsWith(`${l}/`)) || reached.kind !== "file") return true;
      // What a repair could not put back, as the install would find it: said now, not by the install.
      const blocked =
        version === null ? null : reached.through.map((e) => blockedRepair(version, e)).find(Boolean);
      if (blocked) {
        f.why = `${f.why}, and it cannot be put back: ${blocked}; move that away (it is not kata-install's), then install again`;
        return true;
      }
      // The artifacts holding any entry on the way (the link removed, or the file it names).
      const owners = [...byArtifact]
        .filter(([, list]) => list.some((e) => reached.through.includes(e.path)))
        .map(([n]) => n);
      for (const owner of owners)
        if (!repairs.get(owner)?.includes(f.path))
          repairs.set(owner, [...(repairs.get(owner) ?? []), f.path]);
      return owners.length === 0;
    });
    for (const [artifact, missing] of repairs)
      changeset.actions.unshift({
        kind: "pull-artifact",
        target: artifact,
        reason: `repair: ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not as installed (${failures.length === 0 ? "put back" : "put back in part"} from ${source.description})`,
      });
    if (repairs.size > 0) changeset.transfer = await transferOf(source, [...repairs.keys()], allArtifacts);
  }
  decision.checks.push(pathsCheck(failures, problems, paths.length, "on the node as installed"));
}

/** The installed version's directory (`current`'s target) as `{ real, shown }`, or null when there is none to look at. */
async function installedVersionDir(
  host: Host,
  prefix: string,
): Promise<{ real: string; shown: string } | null> {
  const target = await host.readlink(`${prefix}/current`);
  if (target === null || !target.startsWith("versions/") || target.slice("versions/".length).includes("/"))
    return null;
  const shown = `${prefix}/${target}`;
  try {
    return { real: await ownPath(host, prefix, shown, "dir"), shown };
  } catch {
    return null; // a link or a file there: the install's own check of its places says so
  }
}

/**
 * Why the installed version cannot take `entry` back where its list has it, as a repair would
 * put it (renamed into its own directories, never through a link): a link or a file where one of
 * its directories was, or a directory where its file was; null when nothing is in the way.
 */
function blockedRepair(version: { real: string; shown: string }, entry: string): string | null {
  const parts = entry.split("/");
  let at = version.real;
  for (const [i, part] of parts.entries()) {
    at = path.join(at, part);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (st === undefined) return null;
    const shown = `${version.shown}/${parts.slice(0, i + 1).join("/")}`;
    if (i < parts.length - 1 && !st.isDirectory())
      return `${shown} is ${st.isSymbolicLink() ? `a link (to ${fs.readlinkSync(at)})` : "a file"} where kata-install's directory was`;
    if (i === parts.length - 1 && st.isDirectory())
      return `${shown} is a directory where kata-install's file was`;
  }
  return null;
}
