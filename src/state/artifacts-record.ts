// What the journal records of the installed artifacts: the version switched in, its links, and
// what identifies each artifact in the source it came from. Read by the release (a plan against
// the installed version reads its configuration from the node) below the transaction that writes it.
import * as z from "zod/mini";

export const ArtifactsRecordSchema = z.object({
  version: z.nullable(z.string()),
  names: z.array(z.string()),
  links: z.array(z.string()),
  /** Versions of ours switched away from, to remove (absent in journals written before it). */
  retired: z.optional(z.array(z.string())),
  /**
   * The release's meta image that version was installed from (its digest in the source): a plan
   * against that same image reads the release's configuration from the node, not the image.
   */
  meta: z.optional(z.object({ version: z.string(), digest: z.string() })),
  /**
   * What identifies each artifact of that version in the source it came from (its image digest):
   * an upgrade takes an artifact whose digest did not change from the node, not the source.
   * Absent in journals written before it: everything is pulled again.
   */
  identities: z.optional(z.record(z.string(), z.string())),
});
export type ArtifactsRecord = z.infer<typeof ArtifactsRecordSchema>;
