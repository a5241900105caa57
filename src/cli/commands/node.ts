// holdfast node add | ls | rm — the inventory of nodes.
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import { describeImagesDir } from '../../core/node/distroConfig';
import type { NodeDef, NodeInfo, NodeInput } from '../../shared/domain';
import { parsePort, withSession, type Cli } from '../context';
import { table } from '../format';
import { acceptNewHostKeyOption, hostKeyAcceptance } from '../hostKeys';
import { registerNodeImportCommands } from './fleet';

// Validating a node (zod) loads when a command that adds or changes one runs.
const nodes = () => import('../../core/config/nodes');

/** One line saying which images dir a node uses and why (explicit, or detected from what). */
function imagesDirLine(def: Pick<NodeDef, 'imagesDir' | 'imagesDirSource'>, info?: NodeInfo): string {
  if (def.imagesDirSource === 'explicit') return `  images dir: ${def.imagesDir} (as given)`;
  if (def.imagesDirSource === 'detected' && info?.imagesDir) return `  images dir: ${def.imagesDir} (${describeImagesDir(info.distro, info.imagesDir)})`;
  return `  images dir: ${def.imagesDir} (k3s's default; the node's distro and data-dir are read when Holdfast connects)`;
}

export function registerNodeCommands(program: Command, cli: Cli): void {
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
    .addOption(acceptNewHostKeyOption())
    .option('--socket <path>', 'containerd socket on the node', '/run/k3s/containerd/containerd.sock')
    .option('--images-dir <path>', 'images dir on the node (default: <data-dir>/agent/images of its k3s or RKE2, data-dir read from /etc/rancher/<distro>/config.yaml)')
    .option('--namespace <ns>', 'containerd namespace', 'k8s.io')
    .option('--group <group>', 'site or group the node belongs to (for `holdfast inspect --group`)')
    .option('--sudo', 'log in as a non-root --user and reach containerd and the images dir through `sudo -n`')
    .option('--jump <node>', 'reach the node through another configured node (which may have its own --jump)')
    .option('--auth <method>', 'publickey (default: --identity or ssh-agent), password or keyboard-interactive (asked on the terminal, never stored)')
    .option('--no-check', 'save without connecting (for nodes out of reach right now)')
    .action(async (name: string, o) => {
      const input: NodeInput = {
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
      };
      // The check connects to a node that is not saved yet, accepting the host keys the flags
      // name: the service connects saved nodes only (nodes.connect; nodes.trustHostKey takes the
      // fingerprint the app showed), so the check stays here. The save is the service's nodes.add.
      const s = cli.store();
      const existing = await s.list();
      if (existing.some((n) => n.name === name)) {
        throw new HoldfastError('CONFLICT', `a node named "${name}" already exists`, { hint: 'Remove it first with `holdfast node rm`, or choose another name.' });
      }
      const { completeNode } = await nodes();
      const def = completeNode(input);
      if (o.check) {
        const info = await withSession(def, (sess) => sess.detect(), hostKeyAcceptance(o.acceptNewHostKey));
        // Without --images-dir, the one the node's distro uses (its data-dir), from the same probe.
        if (!o.imagesDir && info.imagesDir) Object.assign(input, { imagesDir: info.imagesDir.imagesDir, imagesDirSource: 'detected' });
        const added = await cli.call('nodes.add', { node: input });
        cli.io.out(`added ${name}: containerd ${info.containerdVersion}` + (info.distroVersion ? `, ${info.distro} ${info.distroVersion}` : ''));
        cli.io.out(imagesDirLine(added, info));
      } else {
        const added = await cli.call('nodes.add', { node: input });
        cli.io.out(`added ${name} (not checked)`);
        cli.io.out(imagesDirLine(added));
      }
    });

  node
    .command('ls')
    .description('list configured nodes')
    .option('--json', 'machine-readable output')
    .option('--group <group>', 'only the nodes of this group')
    .action(async (o) => {
      // nodes.list reads nodes.json and nothing else: read here, without loading the service
      // (and the core that reaches nodes under it), so the command run in loops starts fast.
      const all = await cli.store().list();
      const nodes = o.group ? all.filter((n) => n.group === o.group) : all;
      if (o.json) return cli.io.out(JSON.stringify(nodes, null, 2));
      if (nodes.length === 0) {
        return cli.io.out(o.group && all.length ? `no node in group "${o.group}"` : 'no nodes yet: add one with `holdfast node add NAME --host HOST`');
      }
      cli.io.out(
        table(
          ['NAME', 'GROUP', 'ADDRESS', 'USER', 'SOCKET', 'IMAGES DIR'],
          nodes.map((n) => [n.name, n.group ?? '-', `${n.host}:${n.port}`, n.user, n.socket, n.imagesDir]),
        ),
      );
    });

  node
    .command('edit')
    .description('change a node; connects once to check when the address, user, key or socket change (unless --no-check)')
    .argument('<name>')
    .option('--host <host>', 'host name or IP address')
    .option('--port <port>', 'SSH port', parsePort)
    .option('--user <user>', 'SSH user')
    .option('--identity <file>', 'private key file')
    .option('--no-identity', 'use ssh-agent instead of a key file')
    .option('--known-hosts <file>', 'known_hosts file')
    .addOption(acceptNewHostKeyOption())
    .option('--socket <path>', 'containerd socket on the node')
    .option('--images-dir <path>', 'images dir on the node (then kept as given)')
    .option('--no-images-dir', "forget a given images dir: use the one the node's distro and data-dir say (read now, unless --no-check)")
    .option('--namespace <ns>', 'containerd namespace')
    .option('--group <group>', 'site or group the node belongs to')
    .option('--no-group', 'take the node out of its group')
    .option('--sudo', 'reach containerd and the images dir through `sudo -n` (non-root --user)')
    .option('--no-sudo', 'reach them directly (root)')
    .option('--jump <node>', 'reach the node through another configured node')
    .option('--no-jump', 'connect directly')
    .option('--auth <method>', 'publickey, password or keyboard-interactive')
    .option('--no-check', 'save without connecting')
    .action(async (name: string, o) => {
      const s = cli.store();
      const before = await s.get(name);
      const input: NodeInput = { ...before };
      for (const k of ['host', 'port', 'user', 'knownHosts', 'socket', 'namespace'] as const) {
        if (o[k] !== undefined) (input as Record<string, unknown>)[k] = o[k];
      }
      if (typeof o.imagesDir === 'string') Object.assign(input, { imagesDir: o.imagesDir, imagesDirSource: 'explicit' });
      else if (o.imagesDir === false) {
        delete input.imagesDir;
        delete input.imagesDirSource;
      }
      if (typeof o.identity === 'string') input.identity = o.identity;
      else if (o.identity === false) delete input.identity;
      if (typeof o.group === 'string') input.group = o.group;
      else if (o.group === false) delete input.group;
      if (o.sudo === true) input.sudo = true;
      else if (o.sudo === false) delete input.sudo;
      if (typeof o.jump === 'string') input.jump = o.jump;
      else if (o.jump === false) delete input.jump;
      if (typeof o.auth === 'string') input.auth = o.auth;
      const { completeNode } = await nodes();
      let after = completeNode(input);
      const keys = ['host', 'port', 'user', 'identity', 'knownHosts', 'socket', 'imagesDir', 'imagesDirSource', 'namespace', 'group', 'sudo', 'jump', 'auth'] as const;
      const changedBy = (d: NodeDef) => keys.filter((k) => before[k] !== d[k]);
      const detect = o.imagesDir === false && o.check;
      if (changedBy(after).length === 0 && !detect) return cli.io.out(`${name}: nothing to change`);
      const reach = detect || changedBy(after).some((k) => !['imagesDir', 'imagesDirSource', 'group'].includes(k));
      let info: NodeInfo | undefined;
      if (o.check && reach) {
        info = await withSession(after, (sess) => sess.detect(), hostKeyAcceptance(o.acceptNewHostKey));
        if (detect && info.imagesDir) {
          Object.assign(input, { imagesDir: info.imagesDir.imagesDir, imagesDirSource: 'detected' });
          after = completeNode(input);
        }
      }
      const changed = changedBy(after);
      if (changed.length === 0) return cli.io.out(`${name}: nothing to change${o.check && reach ? ' (checked)' : ''}`);
      // Saved only if nobody changed the node since it was read above (else CONFLICT, nothing saved).
      // The check above stays here: it connects to the changed node before it is saved (see node add).
      await cli.call('nodes.update', { name, node: input, expect: before });
      cli.io.out(`updated ${name}${o.check && reach ? ' (checked)' : ''}:`);
      for (const k of changed) cli.io.out(`  ${k}: ${before[k] ?? '(none)'} → ${after[k] ?? '(none)'}`);
      if (changed.includes('imagesDir') || changed.includes('imagesDirSource')) cli.io.out(imagesDirLine(after, info));
    });

  registerNodeImportCommands(node, cli);

  node
    .command('rm')
    .description('forget a node (nothing on the node changes)')
    .argument('<name>')
    .action(async (name: string) => {
      const { removed } = await cli.call('nodes.remove', { name });
      cli.io.out(`removed ${removed}`);
    });
}
