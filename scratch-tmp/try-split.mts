import { buildRelease } from "../test/helpers/release.js";
import { loadArtifactCatalogue } from "../src/install/catalogue.js";
import { splitRelease } from "../src/install/split.js";
const arch = (process.argv[2] ?? "x86_64") as "x86_64";
const { tarballs } = buildRelease(arch);
try {
  const r = await splitRelease(tarballs, "/tmp/layout-" + arch, loadArtifactCatalogue(), arch, "tar");
  console.log(JSON.stringify({ ...r, ignored: r.ignored.length }, null, 1).slice(0, 3000));
} catch (e) { console.log((e as Error).message); }
