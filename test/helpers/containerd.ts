// The real containerd daemon, started on a configuration a test wrote (its root, state and socket
// moved into a scratch directory, nothing else changed): does it load the file, and the CRI plugin?
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, stringify } from "smol-toml";
import { type ContainerdMinor, containerdOf } from "./real-tools.js";

export interface Served {
  /** `ctr plugins ls`'s status of the CRI plugin ("ok", "error", or "" when the daemon never answered). */
  cri: string;
  /** What the daemon logged (the CRI plugin logs the configuration it started with). */
  log: string;
}

/** Start the real containerd of `minor` (Debian's, scripts/test-tools.sh) on `configText`, then stop it. */
export async function containerdServes(configText: string, minor: ContainerdMinor = "1.6"): Promise<Served> {
  const { containerd, ctr } = containerdOf(minor);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kata-install-containerd-"));
  try {
    const config = parse(configText) as Record<string, unknown>;
    const socket = path.join(dir, "containerd.sock");
    config.root = path.join(dir, "root");
    config.state = path.join(dir, "state");
    config.grpc = { ...((config.grpc as object | undefined) ?? {}), address: socket };
    // Nothing of the machine's: no metrics or debug listeners either.
    delete config.debug;
    delete config.metrics;
    const file = path.join(dir, "config.toml");
    fs.writeFileSync(file, stringify(config));
    const logFile = path.join(dir, "containerd.log");
    const out = fs.openSync(logFile, "w");
    const daemon = spawn(containerd, ["--config", file], { stdio: ["ignore", out, out] });
    try {
      let cri = "";
      for (let i = 0; i < 100 && cri === ""; i++) {
        await new Promise((r) => setTimeout(r, 100));
        if (!fs.existsSync(socket)) continue;
        const ls = spawnSync(ctr, ["--address", socket, "plugins", "ls"], {
          encoding: "utf8",
          timeout: 10_000,
        });
        const line = ls.stdout.split("\n").find((l) => /^io\.containerd\.grpc\.v1\s+cri\s/.test(l));
        if (line) cri = line.trim().split(/\s+/).pop() ?? "";
      }
      return { cri, log: fs.readFileSync(logFile, "utf8") };
    } finally {
      daemon.kill("SIGKILL");
      await new Promise((r) => daemon.once("exit", r));
      fs.closeSync(out);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
