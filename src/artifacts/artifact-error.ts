import { UserError } from "../errors.js";

/** An artifact refused or unreadable: the message names the source, the image and the entry. */
export class ArtifactError extends UserError {}

/**
 * The source has no image of that name: not in this release. Only this is taken as absence; any
 * other failure to read an image (the network, a corrupt blob) is an error, said as one.
 */
export class ImageAbsent extends ArtifactError {}

/** For a lookup that may find nothing: null when the image is absent, the error otherwise. */
export function absentAsNull(error: unknown): null {
  if (error instanceof ImageAbsent) return null;
  throw error;
}
