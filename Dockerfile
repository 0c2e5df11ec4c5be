# One image for the API and the worker (docker-compose.yml picks the command).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --include=dev
COPY . .
RUN npm run build \
 && mkdir -p /var/lib/payments/documents && chown node:node /var/lib/payments/documents
USER node
EXPOSE 3000
CMD ["node", "dist/src/server.js"]
