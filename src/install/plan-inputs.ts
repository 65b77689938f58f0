// What a plan is made from, as hashes: the node's facts, kata-install's own data (rules, templates,
// the artifact catalogue), the overrides file, the kata-deploy variables that were read, and
// kata-install's version. A saved plan keeps them, so that applying it can say, input by input, what
// moved since it was made.
import fs from "node:fs";
import path from "node:path";
import { hash } from "../changeset.js";
import type { Overrides } from "../decide/overrides.js";
import type { Facts } from "../detect/facts.js";
import { DEFAULT_OVERRIDES } from "../inputs/overrides.js";
import { dataPath } from "../package-root.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** The directories of kata-install's own data: every file in them can change a plan. */
export const DATA_DIRS = ["rules", "templates", "artifacts"];

/** JSON with keys sorted: the same value hashes the same whatever order its keys were built in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/**
 * The facts' hash, and one per leaf ("kvm.device", "cpu.flags": arrays are leaves), so that a
 * refusal names the facts that changed rather than "the node".
 */
export function factsHashes(facts: Facts): { sha256: string; paths: Record<string, string> } {
  const paths: Record<string, string> = {};
  const walk = (value: unknown, at: string) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, at === "" ? key : `${at}.${key}`);
    } else if (value !== undefined) paths[at] = hash(canonical(value));
  };
  walk(facts, "");
  return { sha256: hash(canonical(facts)), paths };
}

/** Every file of kata-install's data, by its path in the package ("rules/shims.toml"). */
export function dataHashes(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (relative: string) => {
    const full = dataPath(relative);
    for (const entry of fs
      .readdirSync(full, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const inner = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(inner);
      // Their READMEs explain; they cannot change a plan.
      else if (entry.isFile() && !entry.name.endsWith(".md"))
        out[inner] = hash(fs.readFileSync(dataPath(inner)));
    }
  };
  for (const dir of DATA_DIRS) walk(dir);
  return out;
}

export function kataInstallVersion(): string {
  return (JSON.parse(fs.readFileSync(dataPath("package.json"), "utf8")) as { version: string }).version;
}

/**
 * An environment that remembers every variable asked for, set or not: the variables a plan read are
 * the ones that can change it, whichever code reads them, with no list to keep in step.
 */
export function recordingEnv(env: Env): { env: Env; read: () => string[] } {
  const asked = new Set<string>();
  const copy = { ...env };
  const recording = new Proxy(copy, {
    get(target, name) {
      if (typeof name === "string") asked.add(name);
      return Reflect.get(target, name);
    },
    has(target, name) {
      if (typeof name === "string") asked.add(name);
      return Reflect.has(target, name);
    },
  });
  return { env: recording, read: () => [...asked].sort() };
}

/** Each variable's hash, null when unset: values are not kept (a proxy's may hold a password). */
export function envHashes(names: string[], env: Env): Record<string, string | null> {
  return Object.fromEntries(names.map((name) => [name, env[name] === undefined ? null : hash(env[name])]));
}

/**
 * The overrides file the plan read: the one given (made absolute), or the node's own, by its host
 * path (a plan may be made with the node under another root than it is applied with), and the hash
 * of the very text the plan parsed (read again, a file changed in between would be taken for it).
 */
export function overridesInput(
  given: string | null,
  read: Overrides,
): { path: string; sha256: string | null } {
  return { path: given === null ? DEFAULT_OVERRIDES : path.resolve(given), sha256: read.sha256 };
}
