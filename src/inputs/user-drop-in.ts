// kata-deploy's CONTAINERD_USER_DROP_IN_SOURCE_FILE, read in kata-install's own file system (where
// the ConfigMap is mounted), before any stage runs: one that is missing, unreadable or not TOML
// stops everything, named, and nothing on the node changes.
import { parse } from "smol-toml";
import { USER_DROP_IN_VARIABLE, type UserDropIn } from "../decide/user-drop-in.js";
import { InputError } from "../input-error.js";
import { readInputText } from "../input-file.js";
import { tomlErrorText } from "../toml-error.js";

/** A drop-in is a few kilobytes of TOML. */
export const MAX_USER_DROP_IN_BYTES = 1 << 20;

/** The admin's containerd drop-in the environment names; null when it names none. */
export function loadUserDropIn(env: Readonly<Record<string, string | undefined>>): UserDropIn | null {
  const file = env[USER_DROP_IN_VARIABLE]?.trim();
  if (!file) return null;
  const fail = (message: string): never => {
    throw new InputError("the containerd drop-in of CONTAINERD_USER_DROP_IN_SOURCE_FILE cannot be used", [
      { file: "environment", key: USER_DROP_IN_VARIABLE, message: `${file}: ${message}` },
    ]);
  };
  const read = readInputText(file, MAX_USER_DROP_IN_BYTES);
  if (!read.ok)
    fail(read.missing ? "cannot read: it does not exist" : `${read.reason}: it must be a TOML file`);
  const text = (read as { text: string }).text;
  try {
    parse(text);
  } catch (error) {
    fail(`${tomlErrorText(error)}: containerd could not load it (nothing was written)`);
  }
  return { file, text, name: USER_DROP_IN_VARIABLE };
}
