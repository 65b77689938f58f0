// Faults injected on purpose, for the tests that make each write, rename, fsync and restart of an
// install fail in turn (KATA_INSTALL_FAULT=<kind>:<n>: the n-th operation of that kind fails with
// EIO). Unset, as on every node, this is one comparison per operation.
export type FaultKind = "write" | "rename" | "fsync" | "restart";

const wanted = /^(write|rename|fsync|restart):(\d+)$/.exec(process.env.KATA_INSTALL_FAULT ?? "");
const counts = new Map<string, number>();

export function fault(kind: FaultKind, what: string): void {
  if (wanted === null || wanted[1] !== kind) return;
  const n = (counts.get(kind) ?? 0) + 1;
  counts.set(kind, n);
  if (n === Number(wanted[2]))
    throw Object.assign(new Error(`EIO: i/o error (injected), ${kind} ${what}`), { code: "EIO" });
}
