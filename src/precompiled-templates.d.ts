// dist/templates.js, made by scripts/build.mjs before the snapshot's bundle, which it is bundled
// into under this name (src/snapshot.ts): a build output, so not a path in src/.
declare module "kata-install:precompiled-templates" {
  const templates: Record<string, unknown>;
  export default templates;
}
