// The bank simulator process: `BANK_SIMULATOR_PORT` (default 4100), state in `BANK_SIMULATOR_STATE_DIR`
// (default .data/bank-simulator), on `BANK_SIMULATOR_HOST` (default 127.0.0.1). Started by the stack supervisor (scripts/lib/stack.ts startBankSimulator).
import { mkdirSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import path from 'node:path';
import { createBankSimulatorApp } from './app';
import { bankChannels } from './channels';

async function main(): Promise<void> {
  const port = Number(process.env.BANK_SIMULATOR_PORT ?? 4100);
  const stateDir = path.resolve(process.env.BANK_SIMULATOR_STATE_DIR ?? '.data/bank-simulator');
  mkdirSync(stateDir, { recursive: true });
  const channels = bankChannels({ stateDir, publicUrl: `http://127.0.0.1:${port}` });
  // Loopback unless told (a container listens on every interface of its own network).
  const server = createBankSimulatorApp(channels).listen(port, process.env.BANK_SIMULATOR_HOST ?? '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  for (const channel of channels) await channel.start?.();
  // Node's compile cache, when NODE_COMPILE_CACHE turns it on (the test and chaos runs), written now: Node
  // writes it at exit, which a killed process never reaches, so every restart would compile its code again.
  flushCompileCache();
  console.log(`bank simulator listening on http://127.0.0.1:${port} (${channels.map((c) => c.name).join(', ')})`);
  const stop = async () => {
    for (const channel of channels) await channel.stop?.();
    server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
