// What the API server refuses of an object, in its words (422 Invalid): label keys and values that
// are not Kubernetes' (metadata, a pod template's, a selector's, a nodeSelector's), annotations
// over 256 KiB, and a change to a field that is immutable once created (a DaemonSet's selector, a
// RuntimeClass's handler).

type Json = Record<string, unknown>;

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ANNOTATIONS_MAX = 256 * 1024;

function keyProblem(key: string): string | null {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : null;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== null && (prefix.length > 253 || !PREFIX.test(prefix)))
    return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  if (name.length > 63) return "name part must be no more than 63 characters";
  if (!NAME.test(name))
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  return null;
}

function valueProblem(value: unknown): string | null {
  if (typeof value !== "string") return "must be a string";
  if (value.length > 63) return "must be no more than 63 characters";
  if (!VALUE.test(value))
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  return null;
}

function at(object: unknown, path: string[]): unknown {
  let v = object;
  for (const p of path) v = typeof v === "object" && v !== null ? (v as Json)[p] : undefined;
  return v;
}

/** Label maps of an object, by the field path the API names in its errors. */
const LABEL_MAPS: string[][] = [
  ["metadata", "labels"],
  ["spec", "selector", "matchLabels"],
  ["spec", "template", "metadata", "labels"],
  ["spec", "template", "spec", "nodeSelector"],
  ["spec", "nodeSelector"],
  ["scheduling", "nodeSelector"],
];

/** The API's message for an invalid object, or null. */
export function invalid(kind: string, object: Json): string | null {
  const name = String((object.metadata as Json | undefined)?.name ?? "");
  const causes: string[] = [];
  for (const path of LABEL_MAPS) {
    const labels = at(object, path);
    if (typeof labels !== "object" || labels === null) continue;
    for (const [key, value] of Object.entries(labels as Json)) {
      const k = keyProblem(key);
      if (k) causes.push(`${path.join(".")}: Invalid value: "${key}": ${k}`);
      const v = valueProblem(value);
      if (v) causes.push(`${path.join(".")}: Invalid value: "${String(value)}": ${v}`);
    }
  }
  const annotations = at(object, ["metadata", "annotations"]);
  if (typeof annotations === "object" && annotations !== null) {
    const size = Object.entries(annotations as Json).reduce(
      (n, [k, v]) => n + k.length + String(v).length,
      0,
    );
    if (size > ANNOTATIONS_MAX)
      causes.push(`metadata.annotations: Too long: must have at most ${ANNOTATIONS_MAX} bytes`);
  }
  return causes.length === 0 ? null : `${kind} "${name}" is invalid: ${causes.join(", ")}`;
}

/** Fields that cannot change once the object exists, by kind. */
const IMMUTABLE: Record<string, string[][]> = {
  DaemonSet: [["spec", "selector"]],
  RuntimeClass: [["handler"]],
  ClusterRoleBinding: [["roleRef"]],
};

export function immutableChanged(kind: string, before: Json, after: Json): string | null {
  for (const path of IMMUTABLE[kind] ?? [])
    if (JSON.stringify(at(before, path)) !== JSON.stringify(at(after, path)))
      return `${kind} "${String((after.metadata as Json | undefined)?.name ?? "")}" is invalid: ${path.join(".")}: Invalid value: ${JSON.stringify(at(after, path))}: field is immutable`;
  return null;
}
