import * as z from "zod/mini";
import { itemAt } from "../at.js";
import type { DetectContext } from "./context.js";
import { defineSource } from "./source.js";

export const OsFacts = z.object({
  id: z.nullable(z.string()),
  idLike: z.array(z.string()),
  versionId: z.nullable(z.string()),
  prettyName: z.nullable(z.string()),
});
export type OsFacts = z.infer<typeof OsFacts>;

const UNKNOWN: OsFacts = { id: null, idLike: [], versionId: null, prettyName: null };

export const os = defineSource({
  key: "os",
  schema: OsFacts,
  startsProcesses: false,
  unknown: UNKNOWN,
  async detect(ctx: DetectContext): Promise<OsFacts> {
    // os-release(5): /etc/os-release first, /usr/lib/os-release as the fallback.
    let text = await ctx.read("os", "/etc/os-release");
    let where = "/etc/os-release";
    if (text === null) {
      where = "/usr/lib/os-release";
      text = await ctx.read("os", where);
    }
    if (text === null) {
      ctx.problem("os", "no os-release file", { path: "/etc/os-release" });
      return { ...UNKNOWN };
    }
    const values = parseOsRelease(text);
    return {
      id: values.get("ID") ?? null,
      idLike: (values.get("ID_LIKE") ?? "").split(/\s+/).filter(Boolean),
      versionId: values.get("VERSION_ID") ?? null,
      prettyName: values.get("PRETTY_NAME") ?? null,
    };
  },
});

/** Shell-style KEY=value lines; values may be quoted with ' or " (with \ escapes inside ""). */
export function parseOsRelease(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    values.set(itemAt(match, 1, "the key"), unquote(itemAt(match, 2, "the value")));
  }
  return values;
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replace(/\\(["\\$`])/g, "$1");
  }
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1);
  return value;
}
