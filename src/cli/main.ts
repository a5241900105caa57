// `holdfast` — the command line on the same core as the app.
import { Command, CommanderError, Option } from 'commander';
import { holdfastHome } from '../core/config/home';
import { NodeStore, completeNode } from '../core/config/nodes';
import { HoldfastError, toErrorInfo } from '../core/errors';
import { NodeSession } from '../core/node/session';
import type { NodeDef, NodeInput } from '../shared/domain';
import { EXIT, exitCodeFor } from './exit';
import { humanSize, shortDigest, table } from './format';
import { serveCommand } from './serve';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const defaultIo: Io = {
  out: (s) => process.stdout.write(s.endsWith('\n') ? s : s + '\n'),
  err: (s) => process.stderr.write(s.endsWith('\n') ? s : s + '\n'),
};

function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new HoldfastError('INVALID_INPUT', `invalid port "${v}"`);
  return n;
}

async function withSession<T>(def: NodeDef, fn: (s: NodeSession) => Promise<T>, acceptNewHostKey?: boolean): Promise<T> {
  const session = await NodeSession.open(def, acceptNewHostKey ? { acceptNewHostKey: true } : {});
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

export function buildProgram(io: Io = defaultIo): Command {
  const store = () => new NodeStore(holdfastHome());
  const program = new Command('holdfast')
    .description('Durable image pins and safe air-gap imports for k3s nodes, over SSH.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();

  const node = program.command('node').description('manage the nodes Holdfast knows about');

  node
    .command('add')
    .description('add a node; connects once to verify its host key and containerd (unless --no-check)')
    .argument('<name>', 'a short name for the node')
    .requiredOption('--host <host>', 'host name or IP address')
    .option('--port <port>', 'SSH port', parsePort, 22)
    .option('--user <user>', 'SSH user', 'root')
    .option('--identity <file>', 'private key file (default: ssh-agent)')
    .option('--known-hosts <file>', 'known_hosts file (default: ~/.ssh/known_hosts)')
    .option('--accept-new-host-key', 'trust and record the host key of a host not yet in known_hosts')
    .option('--socket <path>', 'containerd socket on the node', '/run/k3s/containerd/containerd.sock')
    .option('--images-dir <path>', 'k3s images dir on the node', '/var/lib/rancher/k3s/agent/images')
    .option('--namespace <ns>', 'containerd namespace', 'k8s.io')
    .option('--no-check', 'save without connecting (for nodes out of reach right now)')
    .action(async (name: string, o) => {
      const input: NodeInput = {
        name,
        host: o.host,
        port: o.port,
        user: o.user,
        socket: o.socket,
        imagesDir: o.imagesDir,
        namespace: o.namespace,
        ...(o.identity ? { identity: o.identity } : {}),
        ...(o.knownHosts ? { knownHosts: o.knownHosts } : {}),
      };
      const s = store();
      const existing = await s.list();
      if (existing.some((n) => n.name === name)) {
        throw new HoldfastError('CONFLICT', `a node named "${name}" already exists`, { hint: 'Remove it first with `holdfast node rm`, or choose another name.' });
      }
      const def = completeNode(input);
      if (o.check) {
        const info = await withSession(def, (sess) => sess.detect(), Boolean(o.acceptNewHostKey));
        await s.add(input);
        io.out(`added ${name}: containerd ${info.containerdVersion}` + (info.distroVersion ? `, ${info.distro} ${info.distroVersion}` : ''));
      } else {
        await s.add(input);
        io.out(`added ${name} (not checked)`);
      }
    });

  node
    .command('ls')
    .description('list configured nodes')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const nodes = await store().list();
      if (o.json) return io.out(JSON.stringify(nodes, null, 2));
      if (nodes.length === 0) return io.out('no nodes yet: add one with `holdfast node add NAME --host HOST`');
      io.out(
        table(
          ['NAME', 'ADDRESS', 'USER', 'SOCKET', 'IMAGES DIR'],
          nodes.map((n) => [n.name, `${n.host}:${n.port}`, n.user, n.socket, n.imagesDir]),
        ),
      );
    });

  node
    .command('rm')
    .description('forget a node (nothing on the node changes)')
    .argument('<name>')
    .action(async (name: string) => {
      await store().remove(name);
      io.out(`removed ${name}`);
    });

  program
    .command('images')
    .description("every image reference on a node, with its pin state")
    .argument('<node>')
    .option('--json', 'machine-readable output')
    .action(async (name: string, o) => {
      const def = await store().get(name);
      const images = await withSession(def, (s) => s.listImages());
      if (o.json) return io.out(JSON.stringify(images, null, 2));
      if (images.length === 0) return io.out(`no images in namespace ${def.namespace} on ${name}`);
      io.out(
        table(
          ['REFERENCE', 'PIN', 'IMAGE ID', 'SIZE', 'PLATFORMS'],
          images.map((i) => [i.name, i.pin, shortDigest(i.imageId), humanSize(i.size), i.platforms.join(',') || '-']),
        ),
      );
      const counts = { durable: 0, k3s: 0, none: 0 };
      for (const i of images) counts[i.pin]++;
      io.out(`\n${images.length} references: ${counts.durable} durable, ${counts.k3s} k3s-pinned, ${counts.none} unpinned`);
    });

  program
    .command('serve')
    .description('serve the Holdfast UI and its API on 127.0.0.1 (token-guarded)')
    .addOption(new Option('--port <port>', 'port (default: any free port)').argParser(parsePort))
    .action(async (o) => serveCommand({ port: o.port, out: io.out }));

  return program;
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE;
    }
    const info = toErrorInfo(e);
    let line = `holdfast: ${info.message}`;
    if (info.hint) line += ` — ${info.hint}`;
    io.err(line);
    return info.code === 'INTERNAL' && !(e instanceof HoldfastError) ? EXIT.FAILURE : exitCodeFor(info.code);
  }
}
