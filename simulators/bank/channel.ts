// One way a bank (or a provider beside it) talks to the service: ISO 20022 files, API Pix, a liquidity
// provider's quotes. Each channel is a module of this folder; channels.ts lists them and the simulator process
// (main.ts) serves them all on one port, so that dev, tests, chaos and bench start one more process, not one per
// channel.
import type Router from '@koa/router';

export interface BankChannel {
  /** Its path prefix, e.g. `iso20022` serves /iso20022/... */
  name: string;
  /** Its endpoints, relative to /<name>. Scenario controls live under /<name>/_scenarios by convention. */
  routes: Router;
  /** Called once the server listens (background work such as settling later or sending webhooks). */
  start?(): Promise<void> | void;
  /** Called before the process exits. */
  stop?(): Promise<void> | void;
}

export interface BankSimulatorOptions {
  /** Where channels keep what must survive a restart of the simulator (a restart in chaos is a bank outage). */
  stateDir: string;
  /** Its own base URL, for links it hands out. */
  publicUrl: string;
}
