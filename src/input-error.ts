import { UserError } from "./errors.js";

/** One thing wrong in an input file, located as precisely as the file allows. */
export interface InputIssue {
  file: string;
  line?: number;
  /** The rule it belongs to, for rule files. */
  rule?: string;
  key?: string;
  message: string;
}

export function formatIssue(issue: InputIssue): string {
  const where = `${issue.file}${issue.line !== undefined ? `:${issue.line}` : ""}`;
  const rule = issue.rule !== undefined ? ` rule "${issue.rule}"` : "";
  const key = issue.key ? ` ${issue.key}:` : "";
  return `${where}:${rule}${key} ${issue.message}`;
}

/** Every problem of an input, reported together: nothing is decided from half a file. */
export class InputError extends UserError {
  constructor(
    readonly what: string,
    readonly issues: InputIssue[],
  ) {
    // In the order of the files and their lines, as an editor would walk them.
    const files = [...new Set(issues.map((i) => i.file))];
    const sorted = [...issues].sort(
      (a, b) => files.indexOf(a.file) - files.indexOf(b.file) || (a.line ?? 0) - (b.line ?? 0),
    );
    super(`${what}:\n${sorted.map((i) => `  ${formatIssue(i)}`).join("\n")}`);
  }
}
