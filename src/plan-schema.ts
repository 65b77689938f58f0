// The schema of `plan --json`: what a saved plan holds and is checked against when it is loaded, and
// what the README documents (a test compares the two). The document itself is built in
// output/plan.ts (the writer); saved plans are read by install/saved-plan.ts (the reader), so it sits
// beside both; a saved plan's is rendered by renderPlan, so a field PlanDocument needs and this
// lacks does not compile, and the tests parse real plans with it (strict: no field it lacks passes).
import * as z from "zod/mini";
import "./schema.js";

/** The kinds of a plan's actions (changeset.ts's PlanAction), as plans and journals spell them. */
export const PLAN_ACTION_KINDS = [
  "pull-artifact",
  "restart-runtime",
  "reload-runtime",
  "take-over",
  "restart-service",
  "stop-service",
] as const;

export const Sha256 = z.string().check(z.regex(/^[0-9a-f]{64}$/, "expected a sha256, 64 hex digits"));

export const PlanJson = z.strictObject({
  checks: z.array(
    z.strictObject({
      id: z.string(),
      severity: z.enum(["error", "warning", "info"]),
      status: z.enum(["pass", "fail", "ignored"]),
      message: z.string(),
      hint: z.optional(z.string()),
      rule: z.string(),
    }),
  ),
  shims: z.array(z.strictObject({ name: z.string(), reason: z.string() })),
  dropped: z.array(z.strictObject({ name: z.string(), reason: z.string() })),
  artifacts: z.array(
    z.strictObject({ name: z.string(), reason: z.string(), from: z.enum(["bundled", "distro"]) }),
  ),
  changes: z.array(
    z.strictObject({
      path: z.string(),
      action: z.enum(["create", "modify", "delete"]),
      reason: z.string(),
      diff: z.string(),
      beforeHash: z.nullable(Sha256),
      afterHash: z.nullable(Sha256),
      link: z.optional(z.literal(true)),
    }),
  ),
  actions: z.array(
    z.strictObject({
      kind: z.enum(PLAN_ACTION_KINDS),
      target: z.string(),
      reason: z.string(),
    }),
  ),
  transfer: z.optional(
    z.strictObject({
      bytes: z.number(),
      releaseBytes: z.number(),
      images: z.number(),
      releaseImages: z.number(),
      reused: z.optional(z.strictObject({ images: z.number(), bytes: z.number(), version: z.string() })),
    }),
  ),
});
export type PlanJson = z.infer<typeof PlanJson>;
