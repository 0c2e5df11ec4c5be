# One image for the API and the worker (docker-compose.yml picks the command).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# scripts/lib/service-runtime.ts: at most two malloc arenas, a 4 MB young generation (see the commands).
ENV MALLOC_ARENA_MAX=2
COPY package.json package-lock.json ./
RUN npm ci --include=dev
COPY . .
RUN npm run build \
 && mkdir -p /var/lib/payments/documents /var/lib/payments/oidc \
 && chown node:node /var/lib/payments/documents /var/lib/payments/oidc
USER node
EXPOSE 3000
CMD ["node", "--max-semi-space-size=4", "dist/src/server.js"]
