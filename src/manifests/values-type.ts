// kata-install's cluster values as they are merged (templates/k8s/values.toml's keys).
export type Values = Record<string, unknown>;
