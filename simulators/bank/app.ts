// The bank simulator's HTTP server: /health and each channel under /<name>.
import Router from '@koa/router';
import Koa from 'koa';
import type { BankChannel } from './channel';

export function createBankSimulatorApp(channels: BankChannel[]): Koa {
  const app = new Koa();
  const root = new Router();
  root.get('/health', (ctx) => {
    ctx.body = { status: 'ok', channels: channels.map((channel) => channel.name) };
  });
  for (const channel of channels) {
    root.use(`/${channel.name}`, channel.routes.routes(), channel.routes.allowedMethods());
  }
  app.use(root.routes()).use(root.allowedMethods());
  return app;
}
