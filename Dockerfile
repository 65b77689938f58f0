# The kata-deploy container's image: kata-install bundled into dist/ with its templates, rules and
# artifact catalogue, on a small Node base. The full image (entrypoint, non-root build stage, CI
# build with buildah) is the work of the container issue; this builds and runs `facts` today.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json biome.json ./
COPY scripts ./scripts
COPY src ./src
RUN node scripts/build.mjs

FROM node:20-bookworm-slim
WORKDIR /opt/kata-install
COPY --from=build /src/dist ./dist
COPY templates ./templates
COPY rules ./rules
COPY artifacts ./artifacts
ENTRYPOINT ["node", "/opt/kata-install/dist/cli.js"]
CMD ["facts", "--host-root", "/host"]
