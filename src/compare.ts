/**
 * Code-point order for sorting names and paths. Deterministic everywhere, and cheap: the first
 * `localeCompare` of a process loads ICU's collation data (~10 ms measured in bench/).
 */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
