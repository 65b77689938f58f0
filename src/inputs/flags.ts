// The command line's shim and check flags (--shims, --default-shim, --ignore-preflight-errors),
// checked by their form before any stage runs.
import { shimNameProblem } from "../decide/catalog.js";
import type { Flags } from "../decide/input.js";
import { unknownCheck } from "../decide/overrides.js";
import { UserError } from "../errors.js";

export interface FlagOptions {
  shims?: string;
  defaultShim?: string;
  ignorePreflightErrors?: string;
}

export function parseFlags(options: FlagOptions, checkIds: ReadonlySet<string>): Flags {
  const list = (text: string | undefined) => (text ?? "").split(/[\s,]+/).filter(Boolean);
  const shims = options.shims === undefined ? undefined : list(options.shims);
  // Names by their form: whether the release ships each is known once it is read (decide).
  for (const name of [
    ...(shims ?? []),
    ...(options.defaultShim === undefined ? [] : [options.defaultShim]),
  ]) {
    const problem = shimNameProblem(name);
    if (problem !== null)
      throw new UserError(`${shims?.includes(name) ? "--shims" : "--default-shim"}: ${problem}`);
  }
  if (shims !== undefined && shims.length === 0) throw new UserError("--shims: name at least one shim");
  const ignore = list(options.ignorePreflightErrors).map((id) => id.toLowerCase());
  for (const id of ignore)
    if (id !== "all" && !checkIds.has(id))
      throw new UserError(`--ignore-preflight-errors: ${unknownCheck(id, checkIds)}`);
  return { shims, defaultShim: options.defaultShim, ignorePreflightErrors: ignore };
}
