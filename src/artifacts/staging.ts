// A directory that artifact files stream into (a version being staged). Every file is written as
// its bytes arrive — nothing holds a whole binary in memory — and every path is checked on the way:
// it stays inside the directory and never goes through a link an earlier entry made, so a link that
// is harmless on its own cannot carry a later file out of the prefix.
import fs from "node:fs";
import path from "node:path";
import { hostError } from "../errors.js";
import { fault } from "../host/fault.js";
import { ArtifactError } from "./artifact-error.js";

/** A file being written: bytes in order, then close. */
export interface FileWriter {
  write(chunk: Buffer): void;
  close(): void;
  /** Give up on the file (the artifact was refused); the staging directory goes as a whole. */
  abort(): void;
}

export class StagingDir {
  files = 0;
  bytes = 0;
  /** Relative paths written, with what each was, for hard links that repeat an earlier file. */
  private readonly written = new Map<string, "file" | "link">();

  constructor(
    /** Absolute path of the directory (already created). */
    readonly root: string,
  ) {}

  /** Absolute path for a relative one, with its parent directories; what was there is replaced. */
  private place(file: string): string {
    const parts = file.split("/");
    if (file === "" || file.startsWith("/") || parts.some((p) => p === ".." || p === "." || p === ""))
      throw new ArtifactError(`${file}: not a plain relative path`);
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join("/");
      if (this.written.get(parent) === "link")
        throw new ArtifactError(`${file}: would be written through the link ${parent}`);
    }
    const target = path.join(this.root, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.rmSync(target, { force: true });
    return target;
  }

  open(file: string, shipped: number): FileWriter {
    const mode = tame(shipped);
    const target = this.place(file);
    let fd: number;
    try {
      fd = fs.openSync(target, "w", mode);
    } catch (error) {
      throw hostError(`cannot write ${file} into ${this.root}`, error);
    }
    let open = true;
    const close = () => {
      if (open) fs.closeSync(fd);
      open = false;
    };
    return {
      write: (chunk) => {
        if (!open) return;
        try {
          fault("write", file);
          fs.writeSync(fd, chunk);
        } catch (error) {
          throw hostError(`cannot write ${file} into ${this.root}`, error);
        }
        this.bytes += chunk.length;
      },
      close: () => {
        if (!open) return; // aborted: the staging directory goes as a whole
        fs.fchmodSync(fd, mode); // the umask must not narrow what the release says
        fs.fchownSync(fd, 0, 0);
        close();
        this.files++;
        this.written.set(file, "file");
      },
      abort: close,
    };
  }

  /** A symbolic link; the caller has checked that its target stays inside the prefix. */
  link(file: string, target: string): void {
    fs.symlinkSync(target, this.place(file));
    this.files++;
    this.written.set(file, "link");
  }

  /** A hard link in an archive: a copy of an earlier file of the same artifact. */
  copy(file: string, from: string): void {
    if (this.written.get(from) !== "file")
      throw new ArtifactError(`${file}: ${from} is not a file written before it`);
    const source = path.join(this.root, from);
    const target = this.place(file);
    fs.copyFileSync(source, target);
    fs.chmodSync(target, tame(fs.statSync(source).mode));
    fs.chownSync(target, 0, 0);
    this.files++;
    this.bytes += fs.statSync(target).size;
    this.written.set(file, "file");
  }

  /**
   * A file of the installed version, unchanged in the new one (its artifact has the same digest):
   * hard-linked when it already has the mode and owner it is installed with (nothing written),
   * copied otherwise. Its bytes are not counted as written.
   */
  reuse(file: string, from: string, shipped: number): void {
    const mode = tame(shipped);
    const target = this.place(file);
    const st = fs.lstatSync(from);
    try {
      if (!st.isFile()) throw new ArtifactError(`${file}: ${from} is not a file`);
      if (!((st.mode & 0o7777) === mode && st.uid === 0 && st.gid === 0 && linked(from, target))) {
        fs.copyFileSync(from, target);
        fs.chmodSync(target, mode);
        fs.chownSync(target, 0, 0);
      }
    } catch (error) {
      if (error instanceof ArtifactError) throw error;
      throw hostError(`cannot take ${file} into ${this.root} from the installed version`, error);
    }
    this.files++;
    this.reusedBytes += st.size;
    this.written.set(file, "file");
  }

  /** Bytes taken from the installed version instead of the source. */
  reusedBytes = 0;

  has(file: string): "file" | "link" | undefined {
    return this.written.get(file);
  }

  /** Every relative path written (files and links): what the version holds of kata-install's. */
  entries(): string[] {
    return [...this.written.keys()];
  }
}

/** A hard link, or false where the file system will not make one (another device, too many links). */
function linked(from: string, to: string): boolean {
  try {
    fs.linkSync(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EXDEV" || code === "EMLINK" || code === "EPERM" || code === "ENOTSUP") return false;
    throw error;
  }
}

/**
 * An artifact's file mode as installed: what it shipped with, less setuid, setgid, sticky and any
 * group or world write bit (nothing Kata ships needs them; an artifact that had them would hand
 * root's files to others). Owner root, whoever the archive named.
 */
export function tame(mode: number): number {
  return mode & 0o755;
}
