// The commands that read or change one node, loaded together: they share nearly all their code, and
// one module with it loads faster than the many small chunks separate entry points split it into.

export { runEntrypoint } from "./entrypoint.js";
export { runExplain } from "./explain.js";
export { runInstall, runUninstall } from "./install.js";
export { runPlan } from "./plan.js";
export { runPreflight } from "./preflight.js";
export { runShims } from "./shims.js";
