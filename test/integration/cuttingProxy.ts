// A loopback TCP proxy in front of a lab node's sshd that drops a connection as a broken link
// does, for the fault tests (chaos, the chaos run). Loopback only; closed by the test.
import net from 'node:net';

export interface CuttingProxy {
  port: number;
  /** Bytes a connection may send to the node before it is cut; null: never cut. Read when a connection opens. */
  cutAfter: number | null;
  /** How many connections were cut. */
  cuts: number;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy to a node's sshd that closes a connection (both sides, at once, as a
 * dropped link does) once `cutAfter` bytes went from the client to the server.
 */
export async function cuttingProxy(target: number): Promise<CuttingProxy> {
  const state = { port: 0, cutAfter: null as number | null, cuts: 0, close: async (): Promise<void> => undefined };
  const live = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: target });
    live.add(client);
    live.add(upstream);
    const limit = state.cutAfter;
    let sent = 0;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (d: Buffer) => {
      sent += d.length;
      if (limit !== null && sent >= limit) {
        state.cuts++;
        return cut();
      }
      if (!upstream.write(d)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.pipe(client);
    for (const s of [client, upstream]) {
      s.on('error', cut);
      s.on('close', () => {
        live.delete(s);
        cut();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.port = (server.address() as net.AddressInfo).port;
  state.close = () =>
    new Promise<void>((r) => {
      for (const s of live) s.destroy();
      server.close(() => r());
    });
  return state;
}

