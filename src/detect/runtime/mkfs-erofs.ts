// erofs-utils' mkfs.erofs, which containerd's erofs differ runs to turn each layer into an erofs
// image: looked for only when EXPERIMENTAL_SETUP_SNAPSHOTTER asks for erofs, and asked (--help)
// which of the options kata-deploy's differ settings pass it (mkfs_options) it takes.
import * as z from "zod/mini";
import { HOST_PATH } from "../../host/host.js";
import type { DetectContext } from "../context.js";

/** The long options of kata-deploy's mkfs_options that not every erofs-utils has (1.8.2 added them). */
export const MKFS_EROFS_OPTIONS = ["mkfs-time", "sort"];

export const MkfsErofs = z.object({
  path: z.string(),
  /** Which of MKFS_EROFS_OPTIONS its --help names; null when it did not answer. */
  options: z.nullable(z.array(z.string())),
});
export type MkfsErofs = z.infer<typeof MkfsErofs>;

/** mkfs.erofs on the host's PATH and what it takes; null when there is none. */
export async function detectMkfsErofs(ctx: DetectContext): Promise<MkfsErofs | null> {
  const found = await Promise.all(HOST_PATH.map((dir) => ctx.exists("runtime", `${dir}/mkfs.erofs`)));
  const index = found.indexOf(true);
  if (index < 0) return null;
  const path = `${HOST_PATH[index]}/mkfs.erofs`;
  const help = await ctx.run("runtime", path, ["--help"]);
  const text = `${help.stdout}\n${help.stderr}`;
  // "--mkfs-time", "--sort=<path,none>": an option is named by its flag, not by a word in a sentence.
  const named = MKFS_EROFS_OPTIONS.filter((option) =>
    new RegExp(`(^|\\s)--${option}(\\b|=)`, "m").test(text),
  );
  return { path, options: help.ok || named.length > 0 ? named : null };
}
