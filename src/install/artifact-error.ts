import { UserError } from "../errors.js";

/** An artifact refused or unreadable: the message names the source, the image and the entry. */
export class ArtifactError extends UserError {}
