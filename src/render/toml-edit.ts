// Minimal edits to a TOML file the admin owns: kata-install never re-serialises it. It removes the
// tables of its own handlers, replaces (or appends) one marked block, and adds an `imports` entry;
// every other byte stays as it was, comments and order included.

import { itemAt } from "../at.js";
import { UserError } from "../errors.js";
import { scanOutsideStrings, splitKey } from "../toml-lines.js";

export const BLOCK_BEGIN =
  "# >>> kata-install: Kata runtime handlers (managed by kata-install; edits here are replaced)";
export const BLOCK_END = "# <<< kata-install";

/**
 * The markers of one install's block: each install (MULTI_INSTALL_SUFFIX) has its own, so several
 * coexist in one file and none takes another's for its own.
 */
export function blockMarkers(suffix = ""): { begin: string; end: string } {
  if (suffix === "") return { begin: BLOCK_BEGIN, end: BLOCK_END };
  return {
    begin: BLOCK_BEGIN.replace("# >>> kata-install:", `# >>> kata-install-${suffix}:`),
    end: `${BLOCK_END}-${suffix}`,
  };
}

/** Any install's begin marker, its suffix captured; and any install's end marker. */
const ANY_BEGIN = /^# >>> kata-install(?:-([a-z0-9-]+))?:/;
const ANY_END = /^# <<< kata-install(?:-[a-z0-9-]+)?\s*$/;

/** The suffixes of the installs other than `suffix` whose blocks `text` holds ("" for the default one). */
export function otherInstalls(text: string, suffix: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = ANY_BEGIN.exec(line);
    if (m !== null && (m[1] ?? "") !== suffix) out.push(m[1] ?? "");
  }
  return out;
}

/** Whether `text` holds an install's begin marker (any suffix). */
export function hasBlock(text: string): boolean {
  return text.split("\n").some((line) => ANY_BEGIN.test(line));
}

interface Span {
  path: string[];
  start: number;
  end: number;
}

/** Every table header's span: from its line to the next header's line (or the end). */
export function tableSpans(text: string): Span[] {
  const spans: Span[] = [];
  // A table runs to the next header, or to one of our block markers: what follows the end marker
  // (an admin's table added later) is never part of a table of ours.
  const boundaries: Array<{ path: string[] | null; start: number }> = [];
  let offset = 0;
  for (const line of text.split("\n")) {
    const header = /^\s*\[\[?\s*(.+?)\s*\]\]?\s*(#.*)?$/.exec(line);
    if (header && !line.trimStart().startsWith("#"))
      boundaries.push({ path: splitKey(itemAt(header, 1, "the table name")), start: offset });
    // Any install's marker line: a table never runs across one.
    else if (ANY_BEGIN.test(line) || ANY_END.test(line)) boundaries.push({ path: null, start: offset });
    offset += line.length + 1;
  }
  for (const [i, b] of boundaries.entries()) {
    if (b.path !== null)
      spans.push({ path: b.path, start: b.start, end: boundaries[i + 1]?.start ?? text.length });
  }
  return spans;
}

/** The admin's table spans: those inside any install's marked block left out. */
export function adminTableSpans(text: string): Span[] {
  const inside: Array<[number, number]> = [];
  let begin: number | null = null;
  let offset = 0;
  for (const line of text.split("\n")) {
    if (ANY_BEGIN.test(line)) begin = offset;
    else if (begin !== null && ANY_END.test(line)) {
      inside.push([begin, offset]);
      begin = null;
    }
    offset += line.length + 1;
  }
  return tableSpans(text).filter((s) => !inside.some(([from, to]) => s.start > from && s.start < to));
}

/**
 * Runtime handler tables named kata-… that stand outside every install's block and were not in
 * `original`, with their lines: what an install wrote, left behind when its markers were taken
 * away (a configuration tool that rewrote the file, say).
 */
export function strayHandlers(text: string, original: string | null): Array<{ name: string; line: number }> {
  // A handler's table or any of its sub-tables ([….runtimes.kata-qemu.options] alone still
  // defines kata-qemu): named once, at its first line.
  const handler = (path: string[]) => {
    const at = path.indexOf("runtimes");
    const name = at >= 0 ? (path[at + 1] ?? "") : "";
    return name.startsWith("kata-") ? name : null;
  };
  const key = (path: string[]) => path.join("\0");
  const before = new Set(original === null ? [] : adminTableSpans(original).map((s) => key(s.path)));
  const found = new Map<string, number>();
  for (const span of adminTableSpans(text)) {
    const name = handler(span.path);
    if (name === null || before.has(key(span.path)) || found.has(name)) continue;
    found.set(name, text.slice(0, span.start).split("\n").length);
  }
  return [...found].map(([name, line]) => ({ name, line }));
}

/** Remove the tables (and their sub-tables) whose path `isOurs` claims. */
export function removeTables(text: string, isOurs: (path: string[]) => boolean): string {
  const spans = tableSpans(text).filter((span) => isOurs(span.path));
  let out = text;
  for (const span of spans.reverse()) out = out.slice(0, span.start) + out.slice(span.end);
  return out;
}

/** Markers that are missing, doubled or out of order: kata-install will not guess its block. */
export class DamagedBlockError extends UserError {}

/**
 * Where our marked block is: [start of the begin line, end of the end line), or null when there
 * is none. A begin marker without an end, markers twice or in the wrong order are refused, naming
 * the file and lines: the admin's text around them is never taken for ours.
 */
export function findBlock(
  text: string,
  file = "the file",
  suffix = "",
): { begin: number; end: number } | null {
  const { begin: beginMarker, end: endMarker } = blockMarkers(suffix);
  const beginTag = beginMarker.slice(0, beginMarker.indexOf(":") + 1);
  const begins: number[] = [];
  const ends: number[] = [];
  let offset = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(beginTag)) begins.push(offset);
    else if (line.trimEnd() === endMarker) ends.push(offset);
    offset += line.length + 1;
  }
  if (begins.length === 0 && ends.length === 0) return null;
  const lineOf = (at: number) => text.slice(0, at).split("\n").length;
  const lines = (list: number[]) => list.map(lineOf).join(", ");
  const fix = `restore kata-install's markers ("${beginTag}…" before its handlers, "${endMarker}" after them) or remove its block by hand; nothing else in the file is touched until then`;
  let problem: string | null = null;
  if (begins.length > 1 || ends.length > 1)
    problem = `kata-install's block markers appear more than once (begin at line(s) ${lines(begins)}, end at line(s) ${lines(ends)})`;
  else if (begins.length === 0)
    problem = `kata-install's end marker (line ${lines(ends)}) has no begin marker`;
  else if (ends.length === 0)
    problem = `kata-install's begin marker (line ${lines(begins)}) has no end marker`;
  else if ((ends[0] as number) < (begins[0] as number))
    problem = `kata-install's end marker (line ${lines(ends)}) comes before its begin marker (line ${lines(begins)})`;
  if (problem !== null) throw new DamagedBlockError(`${file}: ${problem}: ${fix}`);
  const endLine = ends[0] as number;
  const eol = text.indexOf("\n", endLine);
  return { begin: begins[0] as number, end: eol < 0 ? text.length : eol + 1 };
}

/** Replace the marked block, or append it (after a blank line) when there is none. */
export function putBlock(text: string, body: string, file?: string, suffix = ""): string {
  const { begin, end } = blockMarkers(suffix);
  // At most one blank line under the marker, however many the templates begin with.
  const block = `${begin}\n${body.replace(/^\n{2,}/, "\n").trimEnd()}\n${end}\n`;
  const found = findBlock(text, file, suffix);
  if (found) return text.slice(0, found.begin) + block + text.slice(found.end);
  const base = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  return `${base}${base.trim() === "" ? "" : "\n"}${block}`;
}

/** Remove the marked block entirely (uninstalling, or no handler left). */
export function dropBlock(text: string, file?: string, suffix = ""): string {
  const found = findBlock(text, file, suffix);
  if (!found) return text;
  const { begin, end } = found;
  // Take the blank line putBlock added before it, too.
  const start = begin >= 2 && text.slice(begin - 2, begin) === "\n\n" ? begin - 1 : begin;
  return text.slice(0, start) + text.slice(end);
}

/**
 * Make the top-level `imports` include `entry`: add it to the existing array (one line or many), or
 * insert an `imports = [...]` line before the first table (after `version` when that comes first).
 */
export function ensureImport(text: string, entry: string, literal: (value: string) => string): string {
  const firstTable = tableSpans(text)[0]?.start ?? text.length;
  const head = text.slice(0, firstTable);
  const existing = /^imports\s*=\s*\[/m.exec(head);
  if (existing) {
    const open = existing.index + existing[0].length;
    const close = closingBracket(text, open);
    const inside = text.slice(open, close);
    const items = inside.replace(/[\s,]*$/, "");
    const trailing = inside.slice(items.length);
    let updated: string;
    if (items.trim() === "") updated = literal(entry);
    // A multi-line array keeps its shape: the entry on a line of its own before the closing one.
    else if (trailing.includes("\n"))
      updated = `${items},\n  ${literal(entry)},${trailing.slice(trailing.lastIndexOf("\n"))}`;
    else updated = `${items}, ${literal(entry)}`;
    return text.slice(0, open) + updated + text.slice(close);
  }
  const line = `imports = [${literal(entry)}]\n`;
  const version = /^version\s*=.*\n/m.exec(head);
  const at = version ? version.index + version[0].length : 0;
  return text.slice(0, at) + line + text.slice(at);
}

/** The index of the "]" that closes an array opened just before `from`, skipping strings and comments. */
function closingBracket(text: string, from: number): number {
  let depth = 1;
  return scanOutsideStrings(
    text,
    from,
    (c) => {
      if (c === "[") depth++;
      else if (c === "]") return --depth === 0;
      return false;
    },
    true,
  );
}

/**
 * Take out of the top-level `imports` every entry `drop` claims, keeping the rest of the array and
 * file as they are; an array left empty goes with its line.
 */
export function removeImports(text: string, drop: (entry: string) => boolean): string {
  const firstTable = tableSpans(text)[0]?.start ?? text.length;
  const existing = /^imports\s*=\s*\[/m.exec(text.slice(0, firstTable));
  if (!existing) return text;
  const open = existing.index + existing[0].length;
  const close = closingBracket(text, open);
  const entries = [...text.slice(open, close).matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)];
  const kept = entries.filter((m) => !drop(m[1] ?? m[2] ?? ""));
  if (kept.length === entries.length) return text;
  const lineEnd = text.indexOf("\n", close);
  if (kept.length === 0)
    return text.slice(0, existing.index) + text.slice(lineEnd < 0 ? text.length : lineEnd + 1);
  return `${text.slice(0, open)}${kept.map((m) => m[0]).join(", ")}${text.slice(close)}`;
}
