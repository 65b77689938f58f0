// What the code knows is there (a regex's mandatory group, the first part of a split, an element
// inside a checked length) but the type checker cannot see: asserted here, instead of a cast that
// would let a mistake through as undefined. A throw is a bug in kata-install, never bad input.

/** `array.at(index)` that must exist; `what` names it in the error. */
export function itemAt<T>(
  array: ArrayLike<T> & { at(index: number): T | undefined },
  index: number,
  what: string,
): T {
  const value = array.at(index);
  if (value === undefined)
    throw new Error(`internal error: ${what} is missing (index ${index} of ${array.length})`);
  return value;
}

/** A value that must be set; `what` names it in the error. */
export function must<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`internal error: ${what} is missing`);
  return value;
}
