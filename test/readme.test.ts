// The README's and docs/' commands held to the program: every option a synopsis or an example gives
// a command is one that command takes, and a sample whose output needs no node is the output the
// command prints now. A renamed or removed option, or a changed RuntimeClass, fails here, not in a
// reader's shell. And the README is a guide: short, the switch from kata-deploy in its first screen,
// every link to a page or a heading one that is there.
import fs from "node:fs";
import path from "node:path";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../src/cli.js";

/** The guide and the reference behind it: README.md and every page of docs/. */
const PAGES = [
  "README.md",
  ...fs
    .readdirSync("docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const TEXT = new Map(PAGES.map((p) => [p, fs.readFileSync(path.resolve(p), "utf8")]));
const README = TEXT.get("README.md") as string;
const BLOCKS = [...TEXT.values()].flatMap((text) =>
  [...text.matchAll(/^```[a-z]*\n([\s\S]*?)^```/gm)].map((m) => m[1] as string),
);

/** The README's kata-install command lines: each block's synopsis (continued on indented lines) and its `$` lines (continued after a backslash, up to a shell pipe). */
function commandLines(): string[] {
  const out: string[] = [];
  for (const block of BLOCKS) {
    const lines = block.split("\n");
    if (lines[0]?.startsWith("kata-install "))
      out.push([lines[0], ...lines.slice(1).filter((l) => /^\s+\[/.test(l))].join(" "));
    for (let i = 0; i < lines.length; i++) {
      let line = lines[i] as string;
      if (!line.startsWith("$ kata-install")) continue;
      while (line.endsWith("\\") && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i]}`;
      out.push(line.slice(2).split(" | ")[0] as string);
    }
  }
  return out;
}

/** The command a line runs (its subcommands followed) and the options it names. */
function parsed(program: Command, line: string): { command: Command; options: string[] } {
  const words = line.split(/\s+/).slice(1);
  let command = program;
  for (const word of words) {
    const sub = command.commands.find((c) => c.name() === word);
    if (sub === undefined) break;
    command = sub;
  }
  // `kata-install --dry-run …` is install's (cli.ts impliedCommand).
  if (command === program && words.includes("--dry-run"))
    command = program.commands.find((c) => c.name() === "install") as Command;
  const options = words.flatMap((w) => /^\[?(--?[a-z][a-z-]*)/.exec(w)?.[1] ?? []);
  return { command, options };
}

const optionsOf = (command: Command) =>
  new Set([
    "--help",
    "-h",
    ...command.options.flatMap((o) => [o.long, o.short].filter((n) => n !== undefined)),
  ]);

describe("the README", () => {
  it("gives each command only options it takes", () => {
    const program = buildProgram(() => {});
    const lines = commandLines();
    // The synopsis of every command and the examples: far more than a handful.
    expect(lines.length).toBeGreaterThan(30);
    const wrong = lines.flatMap((line) => {
      const { command, options } = parsed(program, line);
      const takes = optionsOf(command);
      return options
        .filter((o) => !takes.has(o))
        .map((o) => `${o}, which ${command.name()} does not take: ${line}`);
    });
    expect(wrong).toEqual([]);
  });

  it("shows the RuntimeClass `manifests` prints for one shim as it prints it", async () => {
    const shown = "$ kata-install manifests --set 'shims=[\"qemu\"]' | grep -A 12 'kind: RuntimeClass'\n";
    const block = BLOCKS.find((b) => b.startsWith(shown));
    expect(block, shown).toBeDefined();
    let printed = "";
    const exitCode = process.exitCode; // the action sets it: this worker's own is kept
    await buildProgram((text) => {
      printed += text;
    }).parseAsync(["node", "kata-install", "manifests", "--set", 'shims=["qemu"]']);
    expect(process.exitCode).toBe(0);
    process.exitCode = exitCode;
    // As `grep -A 12` shows it: the line and the 12 after.
    const lines = printed.split("\n");
    const at = lines.indexOf("kind: RuntimeClass");
    expect(at).toBeGreaterThanOrEqual(0);
    expect(
      lines
        .slice(at, at + 13)
        .join("\n")
        .trimEnd(),
    ).toBe(block?.slice(shown.length).trimEnd());
  });
});

/** GitHub's anchor for a heading: lower case, punctuation but "-" and "_" dropped, spaces as "-". */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replaceAll(" ", "-");

function anchorsIn(text: string): Set<string> {
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("```")) fence = !fence;
    const heading = fence ? null : /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading !== undefined && heading !== null) out.add(anchorOf(heading));
  }
  return out;
}

describe("the README as a guide, docs/ behind it", () => {
  it("is at most 300 lines, with the switch from kata-deploy in its first screen", () => {
    const lines = README.split("\n");
    expect(lines.length).toBeLessThanOrEqual(300);
    expect(lines.slice(0, 25).join("\n")).toContain("(docs/switch-from-kata-deploy.md)");
  });

  it("links only to pages and headings that are there", () => {
    const broken: string[] = [];
    for (const [page, text] of TEXT)
      for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        if (/^[a-z]+:/.test(target ?? "")) continue; // https:, mailto:
        const file = target ? path.normalize(path.join(path.dirname(page), target)) : page;
        if (!fs.existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (
          anchor !== undefined &&
          !anchorsIn(TEXT.get(file) ?? fs.readFileSync(file, "utf8")).has(anchor)
        )
          broken.push(`${page}: ${target}#${anchor} (no such heading)`);
      }
    expect(broken).toEqual([]);
    expect(PAGES.length).toBeGreaterThan(8);
  });
});
