// One key of a table the admin owns, set by kata-install and given back on its own: nydus needs
// `disable_snapshot_annotations = false` in containerd's CRI table, which on containerd 1.x is a
// table of the admin's own file (two tables of one name do not parse, so it cannot go in our
// block). The line kata-install writes carries, in its comment, what it replaced: the admin's
// line byte for byte, or that there was none. So any later plan, and an uninstall after the admin
// edited the file, put the admin's line back from the file alone; every other byte stays.
import { itemAt } from "../at.js";
import { splitKey } from "../toml-lines.js";
import { adminTableSpans } from "./toml-edit.js";

/** The tag of an install's edited line (its MULTI_INSTALL_SUFFIX, like its block's markers). */
function tag(suffix: string): string {
  return suffix === "" ? "kata-install" : `kata-install-${suffix}`;
}

const PUT_BACK = "uninstall puts back: ";
const TAKE_OUT = "uninstall takes this line out";

/**
 * A line of any install's: ` # kata-install[-suffix]: <why>; <put back "…" | take out>`, and
 * whatever an admin wrote after it (a note of theirs keeps it kata-install's line).
 */
const EDITED_LINE =
  /\s#\s(kata-install(?:-[a-z0-9-]+)?): [^;\n]*; (?:uninstall puts back: ("(?:[^"\\]|\\.)*")|uninstall takes this line out)(?:[^\n]*)$/;

export interface KeyEdit {
  table: string[];
  key: string;
  /** The value as a TOML literal. */
  literal: string;
  /** Why, for the line's comment (no ";"). */
  why: string;
}

/**
 * Set `edit.key` in the admin's `[table]`: replace the line that sets it (its old text kept in the
 * new line's comment), or add one under the header. Null when the admin's part of the file has no
 * header of that table (the caller puts the table in its block instead); the text unchanged when the key already
 * has the value, or when an install's edited line is there already.
 */
export function setKey(text: string, edit: KeyEdit, suffix = ""): string | null {
  // A table of that name in a block of ours is ours, not the admin's: the block says it again.
  const span = adminTableSpans(text).find((s) => sameTable(s.path, edit.table));
  if (span === undefined) return null;
  const lines = text.slice(span.start, span.end).split("\n");
  const at = lines.findIndex((line, i) => i > 0 && keyOf(line) === edit.key);
  const comment = (rest: string) => ` # ${tag(suffix)}: ${edit.why}; ${rest}`;
  if (at > 0) {
    const line = itemAt(lines, at, "the key's line");
    if (EDITED_LINE.test(line) || literalOf(line) === edit.literal) return text;
    const indent = /^\s*/.exec(line)?.[0] ?? "";
    lines[at] = `${indent}${edit.key} = ${edit.literal}${comment(`${PUT_BACK}${JSON.stringify(line)}`)}`;
  } else {
    const indent = /^\s*/.exec(lines.find((l, i) => i > 0 && keyOf(l) !== null) ?? "  ")?.[0] ?? "  ";
    lines.splice(1, 0, `${indent}${edit.key} = ${edit.literal}${comment(TAKE_OUT)}`);
  }
  return text.slice(0, span.start) + lines.join("\n") + text.slice(span.end);
}

/**
 * Every line an install of this suffix edited, given back: the admin's line where it replaced
 * one, nothing where it added one. What an admin changed on such a line since (its comment gone)
 * is theirs and stays. Where another install of the file (`heir`, its suffix) is still there, the
 * line is handed to it instead, as it is: that install set nothing of its own, finding it set
 * (setKey), and gives the admin's line back when it goes.
 */
export function revertKeys(text: string, suffix = "", heir: string | null = null): string {
  if (!text.includes(tag(suffix))) return text;
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = EDITED_LINE.exec(line);
    if (m === null || m[1] !== tag(suffix)) {
      out.push(line);
      continue;
    }
    const original = m[2];
    if (heir !== null) out.push(line.replace(` # ${tag(suffix)}: `, ` # ${tag(heir)}: `));
    else if (original !== undefined) out.push(JSON.parse(original) as string);
  }
  return out.join("\n");
}

/** Whether the text holds a line an install of this suffix edited. */
export function hasEditedKey(text: string, suffix = ""): boolean {
  return text.split("\n").some((line) => EDITED_LINE.exec(line)?.[1] === tag(suffix));
}

function sameTable(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i]);
}

/** The bare or quoted key a `key = value` line sets; null for other lines (comments, dotted keys). */
function keyOf(line: string): string | null {
  const m = /^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*=/.exec(line);
  if (m === null) return null;
  const parts = splitKey(itemAt(m, 1, "the key"));
  return parts.length === 1 ? (parts[0] ?? null) : null;
}

/** The value literal of a one-line `key = value # comment` (enough to compare a boolean). */
function literalOf(line: string): string {
  return line
    .slice(line.indexOf("=") + 1)
    .replace(/#.*$/, "")
    .trim();
}
