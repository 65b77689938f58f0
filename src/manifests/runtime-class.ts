// A RuntimeClass as manifests makes it, for a shim or a custom runtime.
export interface RuntimeClassSpec {
  name: string;
  handler: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  overhead: Record<string, string> | null;
  nodeSelector: Record<string, string>;
  tolerations?: unknown[];
}
