// sha256 of bytes, hex: how plans, journals, saved plans and build-time data tell contents apart.
import { createHash } from "node:crypto";

export function hash(content: string | Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}
