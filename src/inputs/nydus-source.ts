// nydus-snapshotter's source directory (EXPERIMENTAL_SETUP_SNAPSHOTTER=nydus), read in
// kata-install's own file system where kata-deploy's image has it: the binaries hashed, the two
// texts checked (src/decide/nydus-source.ts says what they must hold).

import {
  DEFAULT_NYDUS_SOURCE,
  NYDUS_BINARIES,
  NYDUS_SOURCE_VARIABLE,
  NYDUS_TEXTS,
  type NydusBinary,
  type NydusBlob,
  type NydusSource,
  type NydusText,
  type NydusTextFile,
  nydusTextProblem,
} from "../decide/nydus-source.js";
import { SETUP_VARIABLE } from "../decide/setup-env.js";
import { hash } from "../hash.js";
import { MAX_FILE_BYTES } from "../host/fs-ops.js";
import { readInput, readInputText } from "../input-file.js";

/**
 * The binaries, read and hashed; null when EXPERIMENTAL_SETUP_SNAPSHOTTER does not name nydus (no
 * directory is looked at). A directory or binary that is missing is said (not thrown): on CRI-O
 * the variable is ignored, and decide says what stops an install on containerd.
 */
export function loadNydusSource(env: Readonly<Record<string, string | undefined>>): NydusSource | null {
  const named = (env[SETUP_VARIABLE] ?? "").split(",").some((s) => s.trim() === "nydus");
  if (!named) return null;
  const given = env[NYDUS_SOURCE_VARIABLE]?.trim();
  const dir = (given || DEFAULT_NYDUS_SOURCE).replace(/\/+$/, "") || "/";
  const variable = given ? NYDUS_SOURCE_VARIABLE : null;
  const files: Partial<Record<NydusBinary, NydusBlob>> = {};
  const problems: string[] = [];
  for (const name of NYDUS_BINARIES) {
    const from = `${dir}/${name}`;
    const read = readInput(from, MAX_FILE_BYTES);
    if (!read.ok)
      problems.push(`${from} ${read.missing ? "does not exist" : `cannot be used: ${read.reason}`}`);
    else files[name] = { from, sha256: hash(read.bytes), size: read.bytes.length };
  }
  const texts: Partial<Record<NydusText, NydusTextFile>> = {};
  for (const [key, name] of Object.entries(NYDUS_TEXTS) as Array<[NydusText, string]>) {
    const from = `${dir}/${name}`;
    const read = readInputText(from, MAX_TEXT_FILE_BYTES);
    if (!read.ok) {
      problems.push(`${from} ${read.missing ? "does not exist" : `cannot be used: ${read.reason}`}`);
      continue;
    }
    const problem = nydusTextProblem(key, read.text);
    if (problem !== null) problems.push(`${from}: ${problem}`);
    else texts[key] = { from, text: read.text };
  }
  if (problems.length > 0) return { ok: false, dir, variable, problem: problems.join("; ") };
  return {
    ok: true,
    dir,
    variable,
    files: files as Record<NydusBinary, NydusBlob>,
    texts: texts as Record<NydusText, NydusTextFile>,
  };
}

/** kata-deploy's texts are kilobytes. */
const MAX_TEXT_FILE_BYTES = 256 * 1024;
