// holdfast node add | ls | edit | rm — the inventory of nodes (import-ssh-config and add-bulk:
// commands/node/bulk.ts).
import type { Command } from 'commander';
import { checkError, givenArgs } from '../accessText';
import { HoldfastError } from '../../core/errors';
import { describeImagesDir } from '../../core/node/distroConfig';
import { ASSUMED_DISTRO, distroDisplayName } from '../../shared/distro';
import type { NodeDef, NodeInfo, NodeInput } from '../../shared/domain';
import { commandLine } from '../../shared/shellQuote';
import { parsePort, withSession, type Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import type { ColumnFit } from '../fit';
import { helpAfter } from '../help';
import { acceptNewHostKeyOption, hostKeyAcceptance, refuseUnmatched, trackedAcceptance, verifiedKeys, type HostKeyAcceptance } from '../hostKeys';
import { registerNodeImportCommands } from './node/bulk';

// Validating a node (zod) loads when a command that adds or changes one runs.
const nodes = () => import('../../core/config/nodes');

/** One line saying which images dir a node uses and why (explicit, or detected from what). */
function imagesDirLine(def: Pick<NodeDef, 'imagesDir' | 'imagesDirSource'>, info?: NodeInfo): string {
  if (def.imagesDirSource === 'explicit') return `  images dir: ${def.imagesDir} (as given)`;
  if (def.imagesDirSource === 'detected' && info?.imagesDir) return `  images dir: ${def.imagesDir} (${describeImagesDir(info.distro, info.imagesDir)})`;
  return `  images dir: ${def.imagesDir} (${distroDisplayName(ASSUMED_DISTRO)}'s default; the node's distro and data-dir are read when Holdfast connects)`;
}

/** What --accept-new-host-key does in full (node add and node edit). */
const HOST_KEY_NOTE =
  '--accept-new-host-key=SHA256:FINGERPRINT records the key of a host not yet in known_hosts only if it has that fingerprint (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the node prints it); give it once per new host of a --jump chain. Bare, it shows each new fingerprint and asks (on a terminal only). A key that changed is refused whatever the flag says: remove its old entry first (ssh-keygen -R), then `holdfast node edit NAME --accept-new-host-key=SHA256:…` trusts the new one.';
/** What --k8s-node does (node add and node edit). */
const K8S_NODE_NOTE =
  "--k8s-node: the node's name in `kubectl get nodes`, when it is not the name given here and the cluster lists none of its addresses; needs bound to one Node (its pods, a DaemonSet's) then count on it.";
/** What --auth and --sudo do in full (node add and node edit). */
const LOGIN_NOTE =
  '--auth password or keyboard-interactive: the answers are asked on the terminal when Holdfast connects, never stored. --sudo: log in as a non-root --user and reach containerd and the images dir through `sudo -n` (passwordless sudo for them).';

/** How `node ls` gives way on a narrow terminal: paths are elided, the socket (mostly k3s's default) hidden first. */
const NODE_COLUMNS: readonly ColumnFit[] = [
  {}, // NAME: what every command is given, never shortened
  { kind: 'text', min: 8, hide: 3 },
  { kind: 'ref', min: 15 },
  { hide: 2 },
  { kind: 'ref', min: 20, want: 40, hide: 1, extra: true },
  { kind: 'ref', min: 20, want: 40 },
];

export function registerNodeCommands(program: Command, cli: Cli): void {
  const node = program
    .command('node')
    .description('manage the nodes Holdfast knows about')
    .addHelpText(
      'after',
      helpAfter([
        'holdfast node add lab1-n1 --host 127.0.0.1 --port 2201 \\',
        '  --identity /tmp/hf-lab/id_ed25519 --known-hosts /tmp/hf-lab/known_hosts',
        'holdfast node ls --group lab1',
        'holdfast node edit lab1-n1 --group lab1',
        'holdfast node import-ssh-config \'lab1-*\' --dry-run',
        'holdfast node rm lab1-n3',
        'holdfast node add --help',
      ]),
    );

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
    .action(async (name: string, o, cmd: Command) => {
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
        ...(o.k8sNode ? { k8sNode: o.k8sNode } : {}),
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
        const info = await withSession(def, (sess) => sess.detect(), hostKeyAcceptance(o.acceptNewHostKey)).catch((e: unknown) => {
          throw checkError(e, def, givenArgs(cmd));
        });
        // Without --images-dir, the one the node's distro uses (its data-dir), from the same probe.
        if (!o.imagesDir && info.imagesDir) Object.assign(input, { imagesDir: info.imagesDir.imagesDir, imagesDirSource: 'detected' });
        const added = await cli.call('nodes.add', { node: input });
        // Lines for a person: wrapped at words to the terminal (a long data-dir path, a long name).
        const versions = `containerd ${info.containerdVersion}` + (info.distroVersion ? `, ${distroDisplayName(info.distro)} ${info.distroVersion}` : '');
        cli.io.out(cli.screen().text(`added ${name}: ${versions}\n${imagesDirLine(added, info)}`));
      } else {
        const added = await cli.call('nodes.add', { node: input });
        cli.io.out(cli.screen().text(`added ${name} (not checked)\n${imagesDirLine(added)}`));
      }
    });

  node
    .command('ls')
    .description('list configured nodes')
    .option('--json', JSON_HELP)
    .option('--group <group>', 'only the nodes of this group')
    .addHelpText('after', helpAfter(['holdfast node ls', 'holdfast node ls --group lab1', "holdfast node ls --json | jq -r '.[].name'"]))
    .action(async (o) => {
      // nodes.list reads nodes.json and nothing else: read here, without loading the service
      // (and the core that reaches nodes under it), so the command run in loops starts fast.
      const all = await cli.store().list();
      const nodes = o.group ? all.filter((n) => n.group === o.group) : all;
      if (printedAsJson(cli, nodes)) return;
      if (nodes.length === 0) {
        return cli.io.out(o.group && all.length ? `no node in group "${o.group}"` : 'no nodes yet: add one with `holdfast node add NAME --host HOST`');
      }
      cli.io.out(
        cli.screen().table(
          ['NAME', 'GROUP', 'ADDRESS', 'USER', 'SOCKET', 'IMAGES DIR'],
          nodes.map((n) => [n.name, n.group ?? '-', `${n.host}:${n.port}`, n.user, n.socket, n.imagesDir]),
          NODE_COLUMNS,
        ),
      );
      // One machine configured twice (the same host key on record for both): said, with the way out.
      const [{ recordedHostKeys }, { sameMachines, sameMachineText }] = await Promise.all([import('../../core/ssh/machineKeys'), import('../../shared/sameMachine')]);
      for (const g of sameMachines(await recordedHostKeys(nodes))) {
        cli.io.out(cli.screen().text(`warning: ${sameMachineText(g)}: inspect counts it once; to keep one entry: ${commandLine(['node', 'rm', g.nodes.at(-1)!])}`));
      }
    });

  node
    .command('edit')
    .summary('change a node (re-checked when its access changes)')
    .description(
      'Change a node. When anything but its images dir or group changes, Holdfast connects once to check the node as it will be saved (unless --no-check); nothing is saved if the check fails.',
    )
    .argument('<name>', 'the node to change')
    .option('--host <host>', 'host name or IP address')
    .option('--port <port>', 'SSH port', parsePort)
    .option('--user <user>', 'SSH user')
    .option('--identity <file>', 'private key file')
    .option('--no-identity', 'use ssh-agent instead of a key file')
    .option('--known-hosts <file>', 'known_hosts file')
    .addOption(acceptNewHostKeyOption())
    .option('--socket <path>', 'containerd socket on the node')
    .option('--images-dir <path>', 'images dir on the node (kept as given)')
    .option('--no-images-dir', "use the distro's images dir again")
    .option('--namespace <ns>', 'containerd namespace')
    .option('--group <group>', 'site or group the node belongs to')
    .option('--no-group', 'take the node out of its group')
    .option('--sudo', 'reach containerd as root via `sudo -n`')
    .option('--no-sudo', 'reach containerd directly (root login)')
    .option('--jump <node>', 'reach it through another configured node')
    .option('--no-jump', 'connect directly')
    .option('--auth <method>', 'publickey, password or keyboard-interactive')
    .option('--k8s-node <name>', 'its Kubernetes Node name, if not NAME')
    .option('--no-k8s-node', 'match its Kubernetes Node by name and address again')
    .option('--no-check', 'save without connecting')
    .addHelpText(
      'after',
      helpAfter(
        [
          '# The node moved: new address, checked before it is saved',
          'holdfast node edit lab1-n2 --host 10.20.0.22 --port 2222',
          '# Forget an images dir given by hand: read the one its distro uses',
          'holdfast node edit lab1-n2 --no-images-dir',
          '# Regroup without connecting',
          'holdfast node edit lab1-n3 --group lab2 --no-check',
          '# Its Kubernetes Node has another name (kubectl get nodes)',
          'holdfast node edit lab1-n3 --k8s-node ip-10-20-0-13',
        ],
        [
          "--no-images-dir reads the node's distro and data-dir now (with --no-check: at the next connection).",
          HOST_KEY_NOTE,
          LOGIN_NOTE,
          K8S_NODE_NOTE,
        ],
      ),
    )
    .action(async (name: string, o, cmd: Command) => {
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
      if (typeof o.k8sNode === 'string') input.k8sNode = o.k8sNode;
      else if (o.k8sNode === false) delete input.k8sNode;
      const { completeNode } = await nodes();
      let after = completeNode(input);
      const keys = ['host', 'port', 'user', 'identity', 'knownHosts', 'socket', 'imagesDir', 'imagesDirSource', 'namespace', 'group', 'sudo', 'jump', 'auth', 'k8sNode'] as const;
      const changedBy = (d: NodeDef) => keys.filter((k) => before[k] !== d[k]);
      const detect = o.imagesDir === false && o.check;
      // --accept-new-host-key: connect, compare the key the node offers and record it, even when
      // nothing else changes (the same acceptance as node add's and the app's Trust this host).
      const trust: HostKeyAcceptance | undefined = o.acceptNewHostKey;
      if (trust && !o.check) {
        throw new HoldfastError('INVALID_INPUT', '--accept-new-host-key connects to compare the host key, and --no-check says not to connect.', { hint: 'Drop --no-check.' });
      }
      if (changedBy(after).length === 0 && !detect && !trust) return cli.io.out(`${name}: nothing to change`);
      // What only Holdfast reads (not how it reaches the node) is saved without connecting.
      const reach = detect || changedBy(after).some((k) => !['imagesDir', 'imagesDirSource', 'group', 'k8sNode'].includes(k));
      let info: NodeInfo | undefined;
      let keyNote = '';
      const checked = o.check && (reach || trust !== undefined);
      if (checked) {
        const acceptance = trackedAcceptance(trust);
        const seen = await withSession(after, async (sess) => ({ info: await sess.detect(), keys: verifiedKeys(sess.ssh) }), acceptance.accept).catch((e: unknown) => {
          throw checkError(e, after, givenArgs(cmd));
        });
        info = seen.info;
        if (trust) {
          refuseUnmatched(trust, name, seen.keys, acceptance.recorded);
          keyNote = acceptance.recorded.length > 0 ? 'host key recorded' : `host key ${seen.keys[0]} already on record`;
        }
        if (detect && info.imagesDir) {
          Object.assign(input, { imagesDir: info.imagesDir.imagesDir, imagesDirSource: 'detected' });
          after = completeNode(input);
        }
      }
      const changed = changedBy(after);
      if (changed.length === 0) return cli.io.out(cli.screen().text(`${name}: ${keyNote ? `${keyNote}; nothing else to change` : 'nothing to change'}${checked ? ' (checked)' : ''}`));
      // Saved only if nobody changed the node since it was read above (else CONFLICT, nothing saved).
      // The check above stays here: it connects to the changed node before it is saved (see node add).
      await cli.call('nodes.update', { name, node: input, expect: before });
      const lines = [`updated ${name}${o.check && reach ? ' (checked)' : ''}:`, ...changed.map((k) => `  ${k}: ${before[k] ?? '(none)'} → ${after[k] ?? '(none)'}`)];
      if (changed.includes('imagesDir') || changed.includes('imagesDirSource')) lines.push(imagesDirLine(after, info));
      cli.io.out(cli.screen().text(lines.join('\n')));
    });

  registerNodeImportCommands(node, cli);

  node
    .command('rm')
    .description('forget a node (the node itself is not changed)')
    .argument('<name>', 'the node to forget')
    .addHelpText('after', helpAfter(['holdfast node rm lab1-n3']))
    .action(async (name: string) => {
      const { removed } = await cli.call('nodes.remove', { name });
      cli.io.out(`removed ${removed}`);
    });
}
