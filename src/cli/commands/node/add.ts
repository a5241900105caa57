// holdfast node add — one node, checked once over SSH before it is saved (unless --no-check).
import type { Command } from 'commander';
import { givenArgs } from '../../accessText';
import { HoldfastError } from '../../../core/errors';
import { distroDisplayName } from '../../../shared/distro';
import type { NodeInput } from '../../../shared/domain/nodes';
import { parsePort, withSession, type Cli } from '../../context';
import { helpAfter } from '../../help';
import { acceptNewHostKeyOption, hostKeyAcceptance, type HostKeyAcceptance } from '../../hostKeys';
import { HOST_KEY_NOTE, K8S_NODE_NOTE, LOGIN_NOTE, checkError, imagesDirLine, nodes } from './notes';

/** The options of node add, as commander parses them. */
interface AddOptions {
  host: string;
  port: number;
  user: string;
  identity?: string;
  knownHosts?: string;
  acceptNewHostKey?: HostKeyAcceptance;
  socket: string;
  imagesDir?: string;
  namespace: string;
  group?: string;
  sudo?: boolean;
  jump?: string;
  auth?: NodeInput['auth'];
  k8sNode?: string;
  check: boolean;
}

export function registerNodeAdd(node: Command, cli: Cli): void {
  node
    .command('add')
    .summary('add a node, checked once over SSH')
    .description('Add a node. Holdfast connects once to verify its host key and containerd, and reads which images dir its k3s or RKE2 uses (unless --no-check).')
    .argument('<name>', 'a short name for the node, used by every other command')
    .requiredOption('--host <host>', 'host name or IP address')
    .option('--port <port>', 'SSH port', parsePort, 22)
    .option('--user <user>', 'SSH user', 'root')
    .option('--identity <file>', 'private key file (default: ssh-agent, then ~/.ssh/id_*)')
    .option('--known-hosts <file>', 'known_hosts file (default: ~/.ssh/known_hosts)')
    .addOption(acceptNewHostKeyOption())
    .option('--socket <path>', 'containerd socket on the node', '/run/k3s/containerd/containerd.sock')
    .option('--images-dir <path>', "images dir (default: the distro's)")
    .option('--namespace <ns>', 'containerd namespace', 'k8s.io')
    .option('--group <group>', 'site or group of the node')
    .option('--sudo', 'reach containerd as root via `sudo -n`')
    .option('--jump <node>', 'reach it through another configured node')
    .option('--auth <method>', 'publickey, password or keyboard-interactive')
    .option('--k8s-node <name>', 'its Kubernetes Node name, if not NAME (for the needs bound to it)')
    .option('--no-check', 'save without connecting')
    .addHelpText(
      'after',
      helpAfter(
        [
          '# A node of a lab (`npm run lab` prints these lines with its port and dir)',
          'holdfast node add lab1-n1 --host 127.0.0.1 --port 2201 \\',
          '  --identity /tmp/hf-lab/id_ed25519 --known-hosts /tmp/hf-lab/known_hosts',
          '# First contact: trust the host key whose fingerprint you checked on the node',
          'holdfast node add lab1-n2 --host 10.20.0.12 --group lab1 \\',
          '  --accept-new-host-key=SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s',
          '# A non-root login, through lab1-n1, asking for the password',
          'holdfast node add lab1-n3 --host 10.20.0.13 --user ops --sudo \\',
          '  --auth password --jump lab1-n1',
          '# Out of reach right now: save it, check later with `holdfast inspect`',
          'holdfast node add lab1-n4 --host 10.20.0.14 --no-check',
        ],
        [
          "Without --images-dir, the images dir is <data-dir>/agent/images of the node's k3s or RKE2, its data-dir read from /etc/rancher/<distro>/config.yaml when Holdfast connects.",
          HOST_KEY_NOTE,
          LOGIN_NOTE,
          '--jump names a configured node, which may have its own --jump.',
          K8S_NODE_NOTE,
        ],
      ),
    )
    .action((name: string, o: AddOptions, cmd: Command) => addNode(cli, name, o, cmd));
}

/** The node the flags describe, as the service takes it (the images dir only when given). */
function inputFromOptions(name: string, o: AddOptions): NodeInput {
  return {
    name,
    host: o.host,
    port: o.port,
    user: o.user,
    socket: o.socket,
    ...(o.imagesDir ? { imagesDir: o.imagesDir, imagesDirSource: 'explicit' as const } : {}),
    namespace: o.namespace,
    ...(o.identity ? { identity: o.identity } : {}),
    ...(o.knownHosts ? { knownHosts: o.knownHosts } : {}),
    ...(o.group ? { group: o.group } : {}),
    ...(o.sudo ? { sudo: true } : {}),
    ...(o.jump ? { jump: o.jump } : {}),
    ...(o.auth ? { auth: o.auth } : {}),
    ...(o.k8sNode ? { k8sNode: o.k8sNode } : {}),
  };
}

// complete (the node from the flags) → validate (a free name, completeNode) → run (check, save).
async function addNode(cli: Cli, name: string, o: AddOptions, cmd: Command): Promise<void> {
  const input = inputFromOptions(name, o);
  // The check connects to a node that is not saved yet, accepting the host keys the flags
  // name: the service connects saved nodes only (nodes.connect; nodes.trustHostKey takes the
  // fingerprint the app showed), so the check stays here. The save is the service's nodes.add.
  const existing = await cli.store().list();
  if (existing.some((n) => n.name === name)) {
    throw new HoldfastError('CONFLICT', `a node named "${name}" already exists`, { hint: 'Remove it first with `holdfast node rm`, or choose another name.' });
  }
  const { completeNode } = await nodes();
  const def = completeNode(input);
  if (!o.check) {
    const added = await cli.call('nodes.add', { node: input });
    return cli.io.out(cli.screen().text(`added ${name} (not checked)\n${imagesDirLine(added)}`));
  }
  const info = await withSession(def, (sess) => sess.detect(), hostKeyAcceptance(o.acceptNewHostKey)).catch((e: unknown) => {
    throw checkError(e, def, givenArgs(cmd));
  });
  // Without --images-dir, the one the node's distro uses (its data-dir), from the same probe.
  if (!o.imagesDir && info.imagesDir) Object.assign(input, { imagesDir: info.imagesDir.imagesDir, imagesDirSource: 'detected' });
  const added = await cli.call('nodes.add', { node: input });
  // Lines for a person: wrapped at words to the terminal (a long data-dir path, a long name).
  const versions = `containerd ${info.containerdVersion}` + (info.distroVersion ? `, ${distroDisplayName(info.distro)} ${info.distroVersion}` : '');
  cli.io.out(cli.screen().text(`added ${name}: ${versions}\n${imagesDirLine(added, info)}`));
}
