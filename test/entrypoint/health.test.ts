// The probes' endpoints: alive at once, ready only when told, and nothing else served.
import { afterAll, describe, expect, it } from "vitest";
import { startHealth } from "../../src/entrypoint/health.js";

describe("/healthz and /readyz", async () => {
  const health = await startHealth("127.0.0.1", 0);
  afterAll(() => health.close());
  const get = async (path: string) => {
    const response = await fetch(`http://${health.address}${path}`);
    return [response.status, await response.text()];
  };

  it("healthz answers at once; readyz says why it is not ready, then that it is", async () => {
    expect(await get("/healthz")).toEqual([200, "ok\n"]);
    expect(await get("/readyz")).toEqual([503, "starting\n"]);
    health.setReady(false, "installing");
    expect(await get("/readyz")).toEqual([503, "installing\n"]);
    health.setReady(true, "installed: qemu");
    expect(await get("/readyz?verbose")).toEqual([200, "installed: qemu\n"]);
  });

  it("anything else is 404, naming what is served", async () => {
    expect(await get("/metrics")).toEqual([404, "not found: /healthz and /readyz are served here\n"]);
  });
});
