// bench:list's second floor: Holdfast's own way to a node's image list, and nothing else. It
// connects with the CLI's SSH code (host key checked against the lab's known_hosts, key auth),
// opens the tunnel to containerd's socket, lists the namespace's images over gRPC and prints
// their names — what `ctr images ls -q` prints — then closes. No node list, no CLI, no service,
// no probe, no images dir, no fates. Its time is what `holdfast images --json` cannot go under on
// the machine with this data path (ssh2, the tunnel, grpc-js, protobufjs), before it computes
// a single fate. As the CLI does, it loads the gRPC client while the SSH handshake waits on the
// node, and it is built and started the way the CLI bundle is (bench/floor/build.ts).
import { connectSsh } from '../../src/core/ssh/connect';

export async function main(argv: string[]): Promise<number> {
  const [host, port, user, identity, knownHosts, socket] = argv.slice(3);
  const client = () => import('../../src/core/containerd/client');
  const ssh = await connectSsh({
    host: host!,
    port: Number(port),
    user: user!,
    identity: identity!,
    knownHosts: knownHosts!,
    whileHandshaking: () => void client().then((m) => m.prepareContainerdClient()),
  });
  try {
    const tunnel = await ssh.openTunnel(socket!, { user: user! });
    const { GrpcContainerdClient } = await client();
    const containerd = new GrpcContainerdClient({ target: `unix:${tunnel.localPath}`, namespace: 'k8s.io' });
    const images = await containerd.listImages();
    process.stdout.write(images.map((i) => `${i.name}\n`).join(''));
    containerd.close();
    await tunnel.close();
    return 0;
  } finally {
    await ssh.close();
  }
}
