// A shim's `dropIn` (a Kata configuration fragment kata-deploy writes to config.d/) as the overrides
// file's [config.<shim>] values: each key checked as the nodes check it, an error naming the line
// of the values file it is on.
import { parse } from "smol-toml";
import type { Catalog } from "../../decide/catalog.js";
import { checkConfigValue } from "../../decide/rules.js";
import type { InputIssue } from "../../input-error.js";
import { TomlLines } from "../../toml-lines.js";
import type { ChartFile, Path } from "./read.js";

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date);
}

/** Dotted keys ("hypervisor.qemu.default_memory") of every value, with their path in the TOML. */
function flatten(table: Table, at: string[] = []): Array<[string[], unknown]> {
  return Object.entries(table).flatMap(([key, value]) =>
    isTable(value) ? flatten(value, [...at, key]) : [[[...at, key], value] as [string[], unknown]],
  );
}

export function dropInConfig(
  chart: ChartFile,
  path: Path,
  text: string,
  shim: string,
  catalog: Catalog,
  issues: InputIssue[],
): Table {
  const first = chart.textLine(path) ?? chart.lineOf(path);
  const key = path.join(".");
  const lineOf = (tomlLine: number | undefined) =>
    first === undefined || tomlLine === undefined ? chart.lineOf(path) : first + tomlLine - 1;
  let table: Table;
  try {
    table = parse(text) as Table;
  } catch (error) {
    const e = error as { line?: number; message: string };
    issues.push({
      file: chart.file,
      line: lineOf(e.line),
      key,
      message: `not valid TOML: ${e.message.split("\n")[0]}`,
    });
    return {};
  }
  const lines = new TomlLines(text);
  const config: Table = {};
  for (const [parts, value] of flatten(table)) {
    const dotted = parts.join(".");
    const problem = checkConfigValue(catalog, shim, dotted, value);
    if (problem !== null)
      issues.push({
        file: chart.file,
        line: lineOf(lines.lineOf(parts)),
        key: `${key}: ${dotted}`,
        message: problem,
      });
    else config[dotted] = value;
  }
  return config;
}
