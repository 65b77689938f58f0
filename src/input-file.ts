// A file the user gives kata-install to read — values for `manifests -f`, a saved plan, a facts
// file, the overrides file, a kubeconfig, an OCI layout's index — is a regular file under a size
// limit, or it is refused at once, by name: a FIFO would block the read forever, /dev/zero would
// read until memory ran out, and 55 MB of values would be parsed for minutes. Links are followed
// (the user's file may be one); the type is checked before the file is opened (opening a device can
// do things of its own), and again on what was opened.
import { isUtf8 } from "node:buffer";
import fs from "node:fs";
import { failure, notRegular } from "./host/host.js";
import { readBounded } from "./read-bounded.js";

export type InputRead = { ok: true; bytes: Buffer } | { ok: false; missing: boolean; reason: string };

/** The bytes of `file`, at most `maxBytes` of them, or why not ("is a FIFO, not a regular file"). */
export function readInput(file: string, maxBytes: number): InputRead {
  let fd: number;
  try {
    const odd = oddFile(fs.statSync(file));
    if (odd !== null) return { ok: false, missing: false, reason: odd };
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    return failure(error);
  }
  try {
    const st = fs.fstatSync(fd);
    const odd = oddFile(st);
    if (odd !== null) return { ok: false, missing: false, reason: odd };
    if (st.size > maxBytes) return { ok: false, missing: false, reason: tooBig(maxBytes) };
    const bytes = readBounded(fd, maxBytes, st.size);
    return bytes === null ? { ok: false, missing: false, reason: tooBig(maxBytes) } : { ok: true, bytes };
  } catch (error) {
    return failure(error);
  } finally {
    fs.closeSync(fd);
  }
}

/** The same as text: text that is not valid UTF-8 is refused, said so. */
export function readInputText(
  file: string,
  maxBytes: number,
): { ok: true; text: string } | { ok: false; missing: boolean; reason: string } {
  const read = readInput(file, maxBytes);
  if (!read.ok) return read;
  if (!isUtf8(read.bytes)) return { ok: false, missing: false, reason: "is not valid UTF-8 text" };
  return { ok: true, text: read.bytes.toString("utf8") };
}

function oddFile(st: fs.Stats): string | null {
  return st.isDirectory() ? "is a directory" : notRegular(st);
}

function tooBig(maxBytes: number): string {
  return `is larger than ${maxBytes} bytes, more than kata-install reads of such a file`;
}
