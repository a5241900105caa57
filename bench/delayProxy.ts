// A WAN stand-in for benchmarks: TCP proxies on 127.0.0.1 that forward to given ports and
// hold every chunk for half the round-trip time in each direction (the kernel's netem is not
// available here). Runs as its own process so its timers do not share Holdfast's event loop.
//
//   tsx bench/delayProxy.ts RTT_MS PORT...   → prints {"<target port>": <proxy port>, …} then serves
import net from 'node:net';

const [rttArg, ...targets] = process.argv.slice(2);
const oneWay = Number(rttArg) / 2;

function delayed(from: net.Socket, to: net.Socket): void {
  from.on('data', (chunk) => {
    // Same delay for every chunk, so setTimeout keeps them in order.
    setTimeout(() => to.write(chunk), oneWay);
  });
  from.on('end', () => setTimeout(() => to.end(), oneWay));
  from.on('error', () => to.destroy());
  from.on('close', () => setTimeout(() => to.destroy(), oneWay + 1));
}

const map: Record<string, number> = {};
for (const t of targets) {
  const server = net.createServer((client) => {
    client.setNoDelay(true);
    const upstream = net.connect(Number(t), '127.0.0.1');
    upstream.setNoDelay(true);
    delayed(client, upstream);
    delayed(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  map[t] = (server.address() as net.AddressInfo).port;
}
process.stdout.write(JSON.stringify(map) + '\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
