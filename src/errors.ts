/** An error in what the user gave us (a flag, a file): printed as it is, without a stack, exit 1. */
export class UserError extends Error {
  override readonly name = "UserError";
}
