// kata-install's own data files (rules/, the catalogue beside them) read for the decide stage,
// which reads none: each file's text.
import fs from "node:fs";
import type { DataText } from "../decide/data-text.js";

export function readDataFile(file: string): DataText {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    return {
      file,
      problem: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    };
  }
  return { file, text };
}
