// Where a Kata release says its version: its VERSION file, else the Go runtime's data-collection
// script, the one file of a release without VERSION (3.0's, 4.x's per-component tarballs) that
// carries it, built in from the template's `script_version="@VERSION@ (commit @COMMIT@)"`
// (src/runtime/data/kata-collect-data.sh.in:22 @ 3.0.0).

export const COLLECT_SCRIPT = "bin/kata-collect-data.sh";

/** The files (relative to the prefix) a release's version is read from, in order. */
export const VERSION_FILES = ["VERSION", COLLECT_SCRIPT] as const;

export function isVersionFile(file: string): boolean {
  return (VERSION_FILES as readonly string[]).includes(file);
}

/** The version `file`'s text says, if it says one. */
export function versionIn(file: string, text: string): string | undefined {
  if (file === "VERSION") return text.trim().split("\n")[0]?.trim() || undefined;
  // typeset -r script_version="3.0.0 (commit e2a8815…)"
  return /^typeset -r script_version="(\d+\.\d+\.\d+[^ "]*)[ "]/m.exec(text)?.[1];
}
