// The nunjucks environment: kata-install's own templates, values only through the TOML filters,
// and any undefined variable an error (a typo in a template must not render as an empty string).
import fs from "node:fs";
import { parse } from "smol-toml";
import { dataPath } from "../package-root.js";
import { tomlComment, tomlKey, tomlLiteral } from "./toml-literal.js";

/** A template that rendered something wrong: kata-install's bug, never the admin's. */
export class TemplateBug extends Error {
  constructor(
    readonly template: string,
    message: string,
  ) {
    super(`template ${template}: ${message} (a kata-install bug: please report it; nothing was written)`);
  }
}

/** Parse what a template rendered; a failure is the template's bug. */
export function parseRendered(content: string, template: string, what: string): Record<string, unknown> {
  try {
    return parse(content) as Record<string, unknown>;
  } catch (error) {
    throw new TemplateBug(
      template,
      `rendered invalid TOML for ${what}: ${(error as Error).message.split("\n")[0]}`,
    );
  }
}

const OPTIONS = { autoescape: false, throwOnUndefined: true };

export interface Templates {
  render(name: string, context: Record<string, unknown>): string;
  /** A TOML data file kept with the templates: read once, shared, frozen. */
  data(name: string): Readonly<Record<string, unknown>>;
  readonly dir: string;
}

/** The templates of `dir` (templates/ by default), compiled by nunjucks as they are first rendered. */
export async function loadTemplates(dir = dataPath("templates")): Promise<Templates> {
  const { default: nunjucks } = await import("nunjucks");
  const env = new nunjucks.Environment(new nunjucks.FileSystemLoader(dir), OPTIONS);
  env.addFilter("toml", tomlLiteral);
  env.addFilter("key", tomlKey);
  env.addFilter("comment", tomlComment);
  // One shell word, whatever the value holds.
  env.addFilter("sh", (value: unknown) => `'${String(value).replaceAll("'", `'\\''`)}'`);
  // One word of a systemd unit file (a path, a unit's name): systemd splits ExecStart= on spaces and
  // reads %, $ and quotes itself, so a value with anything else is refused, not escaped.
  env.addFilter("unit", (value: unknown) => {
    const text = String(value);
    if (!/^[A-Za-z0-9/._@:+-]+$/.test(text))
      throw new Error(`${JSON.stringify(text)} cannot be one word of a systemd unit file`);
    return text;
  });
  // YAML values as JSON, which YAML reads as it is: no value can break a manifest's structure.
  env.addFilter("json", (value: unknown) => JSON.stringify(value));
  const data = new Map<string, Record<string, unknown>>();
  return {
    dir,
    render(name, context) {
      try {
        return env.render(name, context);
      } catch (error) {
        throw new TemplateBug(name, (error as Error).message.replace(/^\(.*?\)\s*/, ""));
      }
    },
    data(name) {
      // Read once a run: a report asks for the same file for each of thousands of nodes.
      let table = data.get(name);
      if (table === undefined) {
        table = deepFreeze(parse(fs.readFileSync(`${dir}/${name}`, "utf8")) as Record<string, unknown>);
        data.set(name, table);
      }
      return table;
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
