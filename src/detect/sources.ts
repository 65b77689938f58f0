// Every fact source, in the order of the Facts document. This list is the one place a source is
// named: the Facts schema and type, the order of detection and the loading of older documents are
// derived from it.
import { arch } from "./arch.js";
import { cpu } from "./cpu.js";
import { hypervisors } from "./hypervisors.js";
import { iommu } from "./iommu.js";
import { kata } from "./kata.js";
import { kernel } from "./kernel.js";
import { kvm } from "./kvm.js";
import { local } from "./local.js";
import { os } from "./os.js";
import { pci } from "./pci.js";
import { runtime } from "./runtime/index.js";
import { security } from "./security.js";
import { storage } from "./storage.js";

/** Sources share reads through the context, so their order is not a dependency. */
export const SOURCES = [
  arch,
  os,
  kernel,
  cpu,
  kvm,
  security,
  hypervisors,
  runtime,
  pci,
  iommu,
  storage,
  kata,
  local,
] as const;

export type Source = (typeof SOURCES)[number];
export type SourceKey = Source["key"];
