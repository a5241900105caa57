// Bytes on the wire for benchmarks: TCP proxies on 127.0.0.1 in front of given ports (a lab
// node's sshd) that count every byte each way, so every tool that reaches a node through them —
// Holdfast's ssh2, OpenSSH's scp and ssh — is measured at the same place, SSH framing, MACs and
// handshakes included. Runs as its own process (as delayProxy.ts does) so forwarding does not
// share the benchmark's event loop.
//
//   tsx bench/countProxy.ts PORT...   → prints {"<target port>": <proxy port>, …}; then each line
//   read on stdin is answered with one JSON line {"<target port>": {"up": N, "down": N}, …}
//   (totals since start: up = towards the target, down = back).
import net from 'node:net';
import readline from 'node:readline';

const targets = process.argv.slice(2);
const map: Record<string, number> = {};
const counts: Record<string, { up: number; down: number }> = {};

for (const t of targets) {
  const c = (counts[t] = { up: 0, down: 0 });
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(t), '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.on('data', (d: Buffer) => (c.up += d.length));
    upstream.on('data', (d: Buffer) => (c.down += d.length));
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    // pipe() ends the other side on a clean close and lets what is still queued go first
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  map[t] = (server.address() as net.AddressInfo).port;
}
process.stdout.write(JSON.stringify(map) + '\n');
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', () => process.stdout.write(JSON.stringify(counts) + '\n'));
rl.on('close', () => process.exit(0));
