// What may reach a guest kernel's command line (hypervisor.*.kernel_params and the dm-verity
// parameters Kata adds to it). The kernel splits that line at whitespace and stops at a NUL, and
// the Kata agent reads its own settings back from it split at whitespace: a control character (a
// newline, a NUL, an escape) in a value would end one parameter and start one nobody wrote, or cut
// the line short. No input gets one there: the environment, the overrides file, the rules, a
// takeover's carried values (render checks the decided value once more, whatever its source).

/** C0 (tab, newline and NUL among them), DEL, C1, and Unicode's line and paragraph separators. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const NAMES: Record<string, string> = {
  "\0": "a NUL",
  "\t": "a tab",
  "\n": "a newline",
  "\r": "a carriage return",
  "\u001b": "an escape",
};

/** The keys whose value goes onto the guest kernel's command line. */
export function isKernelCmdlineKey(key: string): boolean {
  return /\.(kernel_params|kernel_verity_params)$/.test(key);
}

/** The first control character of `text`, named ("a newline (U+000A)"); null when it has none. */
export function controlCharacter(text: string): string | null {
  const found = CONTROL.exec(text)?.[0];
  if (found === undefined) return null;
  const code = `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
  const name = NAMES[found];
  return name ? `${name} (${code})` : `the control character ${code}`;
}

/** Why `value` may not be a kernel command line (kernel_params), or null. */
export function kernelCmdlineProblem(value: unknown): string | null {
  if (typeof value !== "string") return null; // its type is the release's check
  const control = controlCharacter(value);
  return control === null
    ? null
    : `has ${control}: it would split or cut the guest kernel's command line (separate parameters with spaces)`;
}

/**
 * Why `value` may not be one parameter's value (a proxy in agent.https_proxy=VALUE), or null: it
 * must stay one word, so no whitespace, no quote (the kernel's own quoting would join words the
 * agent splits) and no control character.
 */
export function kernelWordProblem(value: string): string | null {
  const control = controlCharacter(value);
  if (control !== null) return `has ${control}, which would split the guest kernel's command line`;
  if (/\s/.test(value)) return "has a space: it goes on the guest kernel's command line as one parameter";
  if (value.includes('"'))
    return "has a double quote, which the guest kernel's command line takes as quoting";
  return null;
}
