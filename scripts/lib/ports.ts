import net from 'node:net';

/** A TCP port on loopback that nothing listens on now (the OS picks it), for a process about to start. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a process on a free port (`start`), and again on another when it found the port taken: the port is picked
 * before the process binds it, and another process starting meanwhile (the run's other servers) can bind it first.
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

/**
 * A free TCP port on loopback below 32768, for the Temporal server's membership ports: it stores them in a
 * smallint column (cluster_membership.rpc_port), and the OS's own picks (freePort) come from above that.
 */
export async function freeLowPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.unref();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port between 20000 and 32000');
}
