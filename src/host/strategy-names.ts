// How host commands run, by name: one list for the type, the CLI's choices and the environment's
// check. A module of its own, with no imports, so the CLI's start-up can read it for free.
export const STRATEGY_NAMES = ["direct", "root-exec", "chroot", "nsenter"] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];
