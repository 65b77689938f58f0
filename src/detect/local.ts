// Facts the host owner declares: files in /etc/kata-containers/preflight.d/, each one a namespace
// (storage.json → local.storage.*). Static JSON and TOML are read; an executable is run only when
// root owns it and its directory and nobody else can write either (NFD removed its hooks because
// anything that can drop a file there would otherwise run as root), with a timeout, and its output
// must be one JSON object.
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import * as z from "zod/mini";
import { fromJson, toJson } from "../json-text.js";
import { tomlErrorText } from "../toml-error.js";
import type { DetectContext } from "./context.js";
import { defineSource } from "./source.js";

export const LOCAL_DIR = "/etc/kata-containers/preflight.d";

export const LocalFacts = z.record(z.string(), z.record(z.string(), z.json()));
export type LocalFacts = z.infer<typeof LocalFacts>;

const Namespace = z.record(z.string(), z.json());
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export const local = defineSource({
  key: "local",
  schema: LocalFacts,
  startsProcesses: true,
  unknown: {},
  async detect(ctx: DetectContext): Promise<LocalFacts> {
    const facts: LocalFacts = {};
    const dirStats = await ctx.stat("local", LOCAL_DIR);
    if (dirStats === null) return facts;
    const dirSafe = dirStats.uid === 0 && (dirStats.mode & 0o022) === 0;
    for (const entry of await ctx.list("local", LOCAL_DIR)) {
      const file = `${LOCAL_DIR}/${entry}`;
      const refuse = (reason: string) => ctx.problem("local", `refused: ${reason}`, { path: file });
      if (entry.startsWith(".")) continue; // editor and package-manager leftovers
      const stats = await ctx.stat("local", file);
      if (stats === null || !stats.isFile()) {
        refuse("not a regular file");
        continue;
      }
      const executable = (stats.mode & 0o111) !== 0;
      const ext = path.posix.extname(entry);
      const name = executable ? entry.replace(/\.[^.]*$/, "") || entry : entry.slice(0, -ext.length);
      if (!NAME.test(name)) {
        refuse(`"${name}" is not a usable fact namespace (letters, digits, "_" and "-")`);
        continue;
      }
      if (facts[name] !== undefined) {
        refuse(`another file already declared the namespace "${name}"`);
        continue;
      }
      let value: unknown;
      if (executable) {
        // A hook is a file of its own in the directory: a link could name a file that another
        // user controls, or run something else than the file that was checked.
        const link = await ctx.readlink("local", file);
        if (link !== null)
          refuse(`executable is a symbolic link (to ${link}): a hook must be a regular file`);
        else if (stats.uid !== 0) refuse(`executable not owned by root (uid ${stats.uid})`);
        else if ((stats.mode & 0o022) !== 0)
          refuse(`executable is group- or world-writable (mode ${modeOf(stats.mode)})`);
        else if (!dirSafe)
          refuse(`${LOCAL_DIR} is not root-owned or is writable by others (mode ${modeOf(dirStats.mode)})`);
        else value = await runHook(ctx, file);
        if (value === undefined) continue;
      } else if (ext === ".json") {
        value = parseJson(ctx, file, await ctx.read("local", file));
      } else if (ext === ".toml") {
        value = parseTomlFile(ctx, file, await ctx.read("local", file));
      } else {
        refuse("only .json and .toml files, or root-owned executables, are read");
        continue;
      }
      if (value === undefined) continue;
      const checked = Namespace.safeParse(value);
      if (!checked.success) {
        refuse("its content is not one object of JSON values");
        continue;
      }
      facts[name] = checked.data;
    }
    return facts;
  },
});

async function runHook(ctx: DetectContext, file: string): Promise<unknown> {
  const run = await ctx.run("local", file, []);
  if (!run.ok) return undefined;
  return parseJson(ctx, file, run.stdout);
}

function parseJson(ctx: DetectContext, file: string, text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return fromJson(text);
  } catch (error) {
    ctx.problem("local", `invalid JSON: ${(error as Error).message}`, { path: file });
    return undefined;
  }
}

function parseTomlFile(ctx: DetectContext, file: string, text: string | null): unknown {
  if (text === null) return undefined;
  try {
    // Round-trip through JSON: TOML dates become strings, as a JSON fact would carry them.
    return fromJson(toJson(parseToml(text, { integersAsBigInt: "asNeeded" })));
  } catch (error) {
    ctx.problem("local", tomlErrorText(error), { path: file });
    return undefined;
  }
}

function modeOf(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}
