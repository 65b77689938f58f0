# The kata-deploy container's image: kata-install bundled into dist/ (esbuild: the CLI file, one file per
# group of commands and the large libraries, every dependency inside) with its templates, rules and artifact catalogue,
# on a small Node base. Built without a Docker engine by scripts/image.sh (buildah) in CI.

# The bases: the official Node image for each platform (docker buildx, the release workflow), or
# those scripts/image.sh makes locally (--build-arg BUILD_BASE=… BASE=…: Debian's nodejs).
ARG BUILD_BASE=docker.io/library/node:20-bookworm-slim
ARG BASE=docker.io/library/node:20-bookworm-slim

# Build as an unprivileged user: npm's install scripts never run as root. On the build machine's
# platform: the bundle is the same JavaScript for every platform.
FROM --platform=$BUILDPLATFORM ${BUILD_BASE} AS build
# A CA file for npm where the registry is reached through a TLS-inspecting proxy (scripts/image.sh).
ARG npm_config_cafile
ARG NODE_EXTRA_CA_CERTS
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /src
RUN chown node:node /src
USER node
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY --chown=node:node tsconfig.json ./
COPY --chown=node:node scripts/build.mjs ./scripts/
COPY --chown=node:node src ./src
COPY --chown=node:node templates ./templates
COPY --chown=node:node rules ./rules
COPY --chown=node:node artifacts ./artifacts
RUN node scripts/build.mjs

# The runtime image, for the target platform: the bundle and its data, no node_modules. It runs as
# root because it installs on the host (mounted at /host), as kata-deploy does.
FROM --platform=$TARGETPLATFORM ${BASE}
WORKDIR /opt/kata-install
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY templates ./templates
COPY rules ./rules
COPY artifacts ./artifacts
# dist/cli.js is the command (`#!/usr/bin/env node`), on PATH as kata-install.
RUN ln -s /opt/kata-install/dist/cli.js /usr/local/bin/kata-install
# The DaemonSet mounts the host's paths one by one under /host, /usr and /lib among them but not
# /lib64, which is missing on some architectures (a hostPath the kubelet would make): the dynamic
# loader host commands need (/lib64/ld-linux-x86-64.so.2) is reached through this link instead.
RUN mkdir /host && ln -s usr/lib64 /host/lib64
ENTRYPOINT ["/opt/kata-install/dist/cli.js", "entrypoint"]
CMD ["install"]
