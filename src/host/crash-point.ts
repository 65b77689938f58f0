// Named moments where the crash tests kill an install (KATA_INSTALL_CRASH_AT=<name>): each is a
// place where a kill must leave a node the next run can finish or undo.
export function crashPoint(name: string): void {
  if (process.env.KATA_INSTALL_CRASH_AT === name) process.kill(process.pid, "SIGKILL");
}
