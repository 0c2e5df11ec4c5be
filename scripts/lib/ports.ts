import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Where explicit picks start: below it lie the well-known and registered ports other software listens on. */
const LOWEST_PICK = 20_000;

/**
 * The first port of the OS's ephemeral range, from which it draws listen(0)'s ports and every outgoing connection's
 * local port; 32768 where the range cannot be read. Capped at 32768: the Temporal server stores its membership
 * ports in a smallint column (cluster_membership.rpc_port).
 */
function readEphemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > LOWEST_PICK + 1_000 ? Math.min(start, 32_768) : 32_768;
  } catch {
    return 32_768;
  }
}

const ephemeralRangeStart = readEphemeralRangeStart();

/** Whether a server could bind `port` on loopback now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** This process's next pick: from a random start, walked one port at a time, so it never hands out a port twice. */
let nextPick: number | undefined;

/**
 * A TCP port on loopback that nothing listens on now, for a process about to start. Picked below the OS's ephemeral
 * range: a port from inside it stays free only until the process binds it, and meanwhile any outgoing connection of
 * any process can get it as its local port (a run's tests open thousands); below the range only another explicit
 * pick can take it. Each process walks the range from a random start, so its own picks (a Temporal server's ten
 * ports, picked before it binds any) never repeat, and two processes meet only if their walks overlap.
 */
export async function freePort(): Promise<number> {
  const end = ephemeralRangeStart;
  const size = end - LOWEST_PICK;
  nextPick ??= Math.floor(Math.random() * size);
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = LOWEST_PICK + (nextPick % size);
    nextPick += 1;
    if (await isPortFree(port)) return port;
  }
  throw new Error(`no free port between ${LOWEST_PICK} and ${end}`);
}

/**
 * Starts a process on a free port (`start`), and again on another when it found the port taken: the port is picked
 * before the process binds it, and another process starting meanwhile can pick and bind it first.
 */
export async function startOnFreePort<T>(start: (port: number) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= attempts || !/address already in use|EADDRINUSE/i.test(String(error))) throw error;
    }
  }
}
