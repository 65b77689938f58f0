// kata-monitor, as kata-deploy's chart deploys it (monitor.enabled): a DaemonSet of the Kata
// release's kata-monitor image on the nodes the installer runs on, reading the runtime's CRI socket
// and the sandboxes' /run/vc/sbs, its metrics for Prometheus on listen_address. Named and selected
// as the chart's (kata-monitor; app.kubernetes.io/name and instance), so that it is one object
// with the chart's when a cluster switches.
import type { Values } from "./values.js";

type Table = Record<string, unknown>;

/** The CRI socket of a distribution, as the chart derives it. */
const SOCKETS: Record<string, string> = {
  k3s: "unix:///run/k3s/containerd/containerd.sock",
  rke2: "unix:///run/k3s/containerd/containerd.sock",
  k0s: "unix:///run/k0s/containerd.sock",
  microk8s: "unix:///var/snap/microk8s/common/run/containerd.sock",
};
const DEFAULT_SOCKET = "unix:///run/containerd/containerd.sock";

export function monitorDaemonSet(
  v: Values,
  podSpec: { tolerations: unknown; nodeSelector: unknown },
): Table | null {
  const m = v.monitor as Table;
  if (!m.enabled) return null;
  const endpoint =
    String(m.runtime_endpoint ?? "").trim() || SOCKETS[String(v.k8s_distribution ?? "")] || DEFAULT_SOCKET;
  const socketDir = endpoint.replace(/^unix:(\/\/)?/, "").replace(/\/[^/]*$/, "") || "/";
  const labels = {
    "app.kubernetes.io/name": "kata-monitor",
    "app.kubernetes.io/instance": String(m.instance ?? "").trim() || String(v.name),
  };
  const image = String(m.image);
  const tag = String(m.tag ?? "").trim() || String(v.kata_version);
  const logLevel = String(m.log_level ?? "").trim() || (v.debug ? "debug" : "info");
  const secrets = v.image_pull_secrets as unknown[];
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: {
      name: "kata-monitor",
      namespace: v.namespace,
      labels: { ...labels, "app.kubernetes.io/managed-by": "kata-install" },
    },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { "prometheus.io/scrape": "true" } },
        spec: {
          ...(secrets.length > 0 ? { imagePullSecrets: secrets } : {}),
          nodeSelector: podSpec.nodeSelector,
          tolerations: podSpec.tolerations,
          ...(v.priority_class_name ? { priorityClassName: v.priority_class_name } : {}),
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: "kata-monitor",
              image: image.includes("@") ? image : `${image}:${tag}`,
              imagePullPolicy: v.image_pull_policy,
              securityContext: m.security_context,
              args: [
                `-listen-address=${m.listen_address}`,
                `-log-level=${logLevel}`,
                `-runtime-endpoint=${endpoint}`,
              ],
              ports: [{ containerPort: m.port }],
              resources: m.resources,
              volumeMounts: [
                { name: "containerd-sock", mountPath: socketDir, readOnly: true },
                { name: "sbs", mountPath: "/run/vc/sbs/", readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: "containerd-sock", hostPath: { path: socketDir, type: "Directory" } },
            { name: "sbs", hostPath: { path: "/run/vc/sbs/", type: "DirectoryOrCreate" } },
          ],
        },
      },
    },
  };
}
