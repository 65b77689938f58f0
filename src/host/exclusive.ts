// Files kata-install creates where someone else may write too (a node's directories, a sticky /tmp,
// a group's shared directory): created with O_EXCL and never through a link, under a name a
// planted file is unlikely to have.
import fs from "node:fs";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

/**
 * A new file at `real` that nothing else can be: created with O_EXCL (a name already there, a
 * link planted at it included, fails) and never through a link. Returns its descriptor.
 */
export function createExclusive(real: string, mode: number): number {
  return fs.openSync(real, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
}

/**
 * A temp name that a file planted in advance is unlikely to have. What makes the temp safe is its
 * creation (O_EXCL, no link followed: a name already there fails it); the random part only keeps a
 * planted name out of the way. Not crypto's generator: loading it costs a no-op install a
 * millisecond, and nothing here needs to be secret.
 */
export function tempName(prefix: string): string {
  const random = Math.floor(Math.random() * 2 ** 48).toString(16);
  return `${prefix}${process.pid}-${random}${process.hrtime.bigint().toString(16).slice(-4)}`;
}
