// The three patch types the API server takes, as it applies them: JSON merge patch (RFC 7386),
// JSON patch (RFC 6902, its `test` op a precondition) and Kubernetes' strategic merge patch, which
// kubectl apply sends — lists merged by their key (containers by name, env by name, ...) or
// replaced whole, and the directives ($patch, $setElementOrder, $retainKeys,
// $deleteFromPrimitiveList) kubectl's three-way diff writes.

type Json = Record<string, unknown>;

const isMap = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  const out: Json = isMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

export class PatchError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** RFC 6902; a failed `test` or a `remove` of what is not there is refused as the API refuses it. */
export function jsonPatch(
  target: unknown,
  ops: Array<{ op: string; path: string; value?: unknown }>,
): unknown {
  const doc = structuredClone(target);
  for (const op of ops) {
    const parts = op.path
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = parts.pop() as string;
    let parent = doc as Json;
    for (const part of parts) {
      if (!isMap(parent[part]) && !Array.isArray(parent[part])) {
        if (op.op === "add" || op.op === "replace") parent[part] = {};
        else throw new PatchError(`the server rejected our request: path ${op.path} does not exist`, 422);
      }
      parent = parent[part] as Json;
    }
    switch (op.op) {
      case "test":
        if (JSON.stringify(parent[last]) !== JSON.stringify(op.value))
          throw new PatchError(`the server rejected our request: test failed at ${op.path}`, 422);
        break;
      case "add":
      case "replace":
        if (Array.isArray(parent) && last === "-") (parent as unknown[]).push(op.value);
        else parent[last] = op.value;
        break;
      case "remove":
        if (!(last in parent))
          throw new PatchError(`the server rejected our request: remove of missing ${op.path}`, 422);
        delete parent[last];
        break;
      default:
        throw new PatchError(`unsupported JSON patch op ${op.op}`, 400);
    }
  }
  return doc;
}

/** Lists a strategic merge patch merges by a key (the API's patchMergeKey); any other list is replaced. */
const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  ports: "containerPort",
  imagePullSecrets: "name",
  hostAliases: "ip",
  ownerReferences: "uid",
};

const ORDER = "$setElementOrder/";
const DELETE_PRIMITIVES = "$deleteFromPrimitiveList/";

export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  if (patch.$patch === "replace") {
    const { $patch: _, ...rest } = patch;
    return rest;
  }
  if (patch.$patch === "delete") return undefined;
  const out: Json = isMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === "$retainKeys" || key === "$patch" || key.startsWith(ORDER)) continue;
    if (key.startsWith(DELETE_PRIMITIVES)) {
      const field = key.slice(DELETE_PRIMITIVES.length);
      out[field] = ((out[field] as unknown[]) ?? []).filter((v) => !(value as unknown[]).includes(v));
      continue;
    }
    if (value === null) {
      delete out[key];
      continue;
    }
    const mergeKey = MERGE_KEYS[key];
    if (Array.isArray(value) && mergeKey !== undefined)
      out[key] = mergeList((out[key] as Json[]) ?? [], value as Json[], mergeKey);
    else if (isMap(value)) {
      const merged = strategicMergePatch(out[key], value);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else out[key] = value;
  }
  for (const [key, order] of Object.entries(patch))
    if (key.startsWith(ORDER)) {
      const field = key.slice(ORDER.length);
      const mergeKey = MERGE_KEYS[field];
      const list = out[field];
      if (!Array.isArray(list) || mergeKey === undefined) continue;
      const rank = (item: Json) =>
        (order as Json[]).findIndex((o) => isMap(o) && o[mergeKey] === item[mergeKey]);
      out[field] = [...(list as Json[])].sort((a, b) => rank(a) - rank(b));
    }
  if (Array.isArray(patch.$retainKeys))
    for (const key of Object.keys(out)) if (!(patch.$retainKeys as string[]).includes(key)) delete out[key];
  return out;
}

function mergeList(current: Json[], patch: Json[], mergeKey: string): Json[] {
  const out = [...current];
  for (const item of patch) {
    const at = out.findIndex((c) => c[mergeKey] === item[mergeKey]);
    if (item.$patch === "delete") {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) out[at] = strategicMergePatch(out[at], item) as Json;
    else out.push(strategicMergePatch({}, item) as Json);
  }
  return out;
}
