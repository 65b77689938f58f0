// Node Feature Discovery's local feature files (features.d), read as nfd-worker and nfd-master do
// by their documentation: one feature a line, `name` or `name=value` (a name alone is "true"), `#`
// comments and `# +directive` lines (expiry-time, no-label, no-feature); a name without a namespace
// gets feature.node.kubernetes.io/; every label must be one Kubernetes takes. Returns the labels the
// node would get.
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function parseFeatureFile(text: string, now = new Date()): Record<string, string> {
  const labels: Record<string, string> = {};
  let expires: Date | null = null;
  let noLabel = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      const directive = /^# \+([a-z-]+)(?:=(.*))?$/.exec(line);
      if (directive?.[1] === "expiry-time") expires = new Date(String(directive[2]).trim());
      else if (directive?.[1] === "no-label") noLabel = true;
      else if (directive && directive[1] !== "no-feature") throw new Error(`unknown directive: ${line}`);
      continue;
    }
    if (expires !== null && expires < now) continue;
    const eq = line.indexOf("=");
    const name = eq < 0 ? line : line.slice(0, eq);
    const value = eq < 0 ? "true" : line.slice(eq + 1);
    if (!noLabel) labels[name.includes("/") ? name : `feature.node.kubernetes.io/${name}`] = value;
    noLabel = false;
  }
  for (const [key, value] of Object.entries(labels)) {
    const [prefix, name] = key.split("/") as [string, string];
    if (!DNS_SUBDOMAIN.test(prefix) || prefix.length > 253) throw new Error(`bad label prefix: ${key}`);
    if (!NAME.test(name) || name.length > 63) throw new Error(`bad label name: ${key}`);
    if (value !== "" && (!NAME.test(value) || value.length > 63))
      throw new Error(`bad label value: ${key}=${value}`);
  }
  return labels;
}
