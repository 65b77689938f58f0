// A file of kata-install's own data (rules/, the catalogue), as src/inputs/ read it for decide: the
// decide stage reads no files, so what could not be read arrives as the problem its issue says.
import type { InputIssue } from "../input-error.js";

export type DataText =
  | {
      file: string;
      text: string;
      /** The text as the build parsed it already (dist/data.json), when it did. */
      table?: Record<string, unknown>;
    }
  | { file: string; problem: string };

export type ReadText = Extract<DataText, { text: string }>;

/** `data` if it was read; otherwise its problem joins `issues`, named by its file. */
export function readable(data: DataText, issues: InputIssue[]): ReadText | null {
  if ("text" in data) return data;
  issues.push({ file: data.file, message: data.problem });
  return null;
}
