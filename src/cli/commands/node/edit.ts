// holdfast node edit — change a node, re-checked over SSH when how it is reached changes.
import type { Command } from 'commander';
import { givenArgs } from '../../accessText';
import { HoldfastError } from '../../../core/errors';
import type { NodeDef, NodeInfo, NodeInput } from '../../../shared/domain/nodes';
import { parsePort, withSession, type Cli } from '../../context';
import { helpAfter } from '../../help';
import { acceptNewHostKeyOption, refuseUnmatched, trackedAcceptance, verifiedKeys, type HostKeyAcceptance } from '../../hostKeys';
import { HOST_KEY_NOTE, K8S_NODE_NOTE, LOGIN_NOTE, checkError, imagesDirLine, nodes } from './notes';

/** The options of node edit, as commander parses them: a --no-X flag makes X false. */
interface EditOptions {
  host?: string;
  port?: number;
  user?: string;
  identity?: string | false;
  knownHosts?: string;
  acceptNewHostKey?: HostKeyAcceptance;
  socket?: string;
  imagesDir?: string | false;
  namespace?: string;
  group?: string | false;
  sudo?: boolean;
  jump?: string | false;
  auth?: NodeInput['auth'];
  k8sNode?: string | false;
  check: boolean;
}

export function registerNodeEdit(node: Command, cli: Cli): void {
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
    .action((name: string, o: EditOptions, cmd: Command) => editNode(cli, name, o, cmd));
}

/** The node as saved, with the flags applied: a value sets a field, a --no-X flag removes it. */
function editedInput(before: NodeDef, o: EditOptions): NodeInput {
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
  return input;
}

const EDITABLE = ['host', 'port', 'user', 'identity', 'knownHosts', 'socket', 'imagesDir', 'imagesDirSource', 'namespace', 'group', 'sudo', 'jump', 'auth', 'k8sNode'] as const;
/** What only Holdfast reads (not how it reaches the node): saved without connecting. */
const LOCAL_ONLY: readonly string[] = ['imagesDir', 'imagesDirSource', 'group', 'k8sNode'];

// complete (the flags over the saved node) → validate (completeNode, the flags' consistency) →
// run (check over SSH when the access changed, save only if nobody changed the node meanwhile).
async function editNode(cli: Cli, name: string, o: EditOptions, cmd: Command): Promise<void> {
  const before = await cli.store().get(name);
  const input = editedInput(before, o);
  const { completeNode } = await nodes();
  let after = completeNode(input);
  const changedBy = (d: NodeDef) => EDITABLE.filter((k) => before[k] !== d[k]);
  const detect = o.imagesDir === false && o.check;
  // --accept-new-host-key: connect, compare the key the node offers and record it, even when
  // nothing else changes (the same acceptance as node add's and the app's Trust this host).
  const trust: HostKeyAcceptance | undefined = o.acceptNewHostKey;
  if (trust && !o.check) {
    throw new HoldfastError('INVALID_INPUT', '--accept-new-host-key connects to compare the host key, and --no-check says not to connect.', { hint: 'Drop --no-check.' });
  }
  if (changedBy(after).length === 0 && !detect && !trust) return cli.io.out(`${name}: nothing to change`);
  const reach = detect || changedBy(after).some((k) => !LOCAL_ONLY.includes(k));
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
}
