// uninstall --dry-run's preview: what a run cut short leaves is said, whichever step it was in.
import { afterAll, describe, expect, it } from "vitest";
import { emptyJournal, journalFor } from "../../src/install/journal.js";
import { previewUninstall } from "../../src/install/preview.js";
import { intelContainerd16 } from "../helpers/nodes.js";
import { buildHost, removeTestHosts } from "../helpers/test-host.js";

afterAll(removeTestHosts);

describe("previewUninstall", () => {
  it("says a run was cut short while it staged artifacts, as recovery and the plan's check do", async () => {
    const host = buildHost(intelContainerd16());
    host.write("/opt/kata/.install/.keep", "");
    const store = journalFor(host.host, "/opt/kata");
    await store.save(emptyJournal());
    expect(await previewUninstall(store)).toEqual({
      installed: true,
      cutShort: false,
      changes: [],
      restored: [],
      removed: [],
      leftEdited: [],
      kept: [],
      leftDirs: [],
      restart: null,
      artifactsVersion: null,
    });
    await store.save({
      ...emptyJournal(),
      staging: { dir: "/opt/kata/versions/abc.partial", version: "/opt/kata/versions/abc", createdDirs: [] },
    });
    expect((await previewUninstall(store)).cutShort).toBe(true);
  });
});
