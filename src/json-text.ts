// JSON with TOML's integers kept whole. Kata's Rust configurations hold int64 values no JavaScript
// number can (compact_force_times = 9223372036854775807): read from TOML they are bigints, and here
// they are written as the digits they are and read back as bigints — never rounded, never quoted.
import { isInteger, isSafeNumber, parse } from "lossless-json";

/** Digits enough to be past Number.MAX_SAFE_INTEGER (2^53 has 16): the text needs the slow reader. */
const LONG_DIGITS = /\d{16}/;
const MARK = "\u0000bigint:";
const MARKED = /"\\u0000bigint:(-?\d+)"/g;

function parseNumber(text: string): number | bigint {
  return isInteger(text) && !isSafeNumber(text) ? BigInt(text) : Number(text);
}

/** JSON.parse, but an integer past 2^53 is a bigint. Throws SyntaxError as JSON.parse does. */
export function fromJson(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text);
  return parse(text, null, parseNumber);
}

/** JSON.stringify, but a bigint is written as its digits. */
export function toJson(value: unknown, indent?: number): string {
  const text = JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${MARK}${v}` : v), indent);
  return text === undefined ? text : text.replace(MARKED, "$1");
}

/**
 * Why a text is not JSON, without quoting it (Node's message quotes the text's start: a secret in a
 * file given by mistake would be printed).
 */
export function jsonErrorText(error: unknown): string {
  const message = (error as Error).message;
  const at = /at position (\d+)/.exec(message)?.[1];
  if (/is not valid JSON$/.test(message) || /^Unexpected token/.test(message))
    return `an unexpected character${at === undefined ? "" : ` at position ${at}`}`;
  return message.replace(/"[^"]*"/g, "…");
}

/** A value as messages and plans show it: its JSON ("undefined" for none). */
export function shown(value: unknown): string {
  return toJson(value) ?? "undefined";
}
