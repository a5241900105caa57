// The banner `npm run lab` prints once its nodes are up: what each node is, where its files are on
// this machine, and the commands to paste (`bin/holdfast.mjs node add …`, `ctr`, `ssh`). Fitted to
// a terminal as the CLI fits its own output (src/cli/screen.ts): prose wrapped at words, a command
// continued with ` \` so that it still runs when pasted. Pure: the width is an argument.
import { Screen } from '../src/cli/screen.ts';
import type { LabDistro } from './containerd.ts';

/** The columns the banner fits when stdout is no terminal (a log, a test): a terminal's usual 100. */
export const BANNER_WIDTH = 100;

export interface BannerNode {
  name: string;
  user: string;
  host: string;
  port: number;
  hostKeyFingerprint: string;
  hostSocket: string;
  hostImagesDir: string;
  ctrBinary: string;
  /** The server: its kubectl answers (the first node). */
  server: boolean;
}

export interface BannerInput {
  distro: LabDistro;
  /** The distro's release on every node (v1.33.7+k3s1). */
  release: string;
  containerdVersion: string;
  startedMs: number;
  dir: string;
  clientKey: string;
  knownHosts: string;
  seed: boolean;
  nodes: BannerNode[];
}

export function labBanner(b: BannerInput, width: number): string {
  const screen = new Screen(true, width);
  const distroName = b.distro === 'k3s' ? 'k3s' : 'RKE2';
  // Its kubectl on a server, as Holdfast runs it (docs/k3s-facts.md).
  const kubectl = b.distro === 'k3s' ? 'k3s kubectl' : '/var/lib/rancher/rke2/bin/kubectl --kubeconfig /etc/rancher/rke2/rke2.yaml';
  const out: string[] = [];
  const text = (s: string) => out.push(screen.text(s));
  const command = (s: string) => out.push(screen.command(s));
  text(`Holdfast lab: ${b.nodes.length} ${distroName} node(s) up in ${b.startedMs} ms on containerd ${b.containerdVersion} (CRI plugin on)`);
  text(`  lab dir:       ${b.dir}`);
  text(`  identity file: ${b.clientKey}`);
  text(`  known_hosts:   ${b.knownHosts}`);
  for (const n of b.nodes) {
    out.push('');
    text(`${n.name}: ${n.user}@${n.host} port ${n.port}`);
    text(`  ${`${b.distro}:`.padEnd(13)}${b.release}, ${n.server ? `server: \`${kubectl} get … -o json\` answers` : `agent: \`${b.distro === 'k3s' ? kubectl : 'kubectl'}\` has no kubeconfig`}`);
    if (n.server) text(`  workloads:   ${b.seed ? 'Deployment default/sample, CronJob default/nightly-report, ' : ''}${b.nodes.length} Node(s)`);
    text(`  host key:    ${n.hostKeyFingerprint}`);
    text(`  socket:      /run/k3s/containerd/containerd.sock (host side ${n.hostSocket})`);
    text(`  images dir:  /var/lib/rancher/${b.distro}/agent/images (host side ${n.hostImagesDir})`);
    text('  ctr:');
    command(`    ${n.ctrBinary} -a ${n.hostSocket} -n k8s.io images ls`);
    // bin/holdfast.mjs, not npx: npx's own package resolution adds about 2 s to every command.
    command(`  bin/holdfast.mjs node add ${n.name} --host ${n.host} --port ${n.port} --identity ${b.clientKey} --known-hosts ${b.knownHosts}`);
    command(`  ssh -i ${b.clientKey} -p ${n.port} -o UserKnownHostsFile=${b.knownHosts} ${n.user}@${n.host}`);
  }
  out.push('');
  text(`${distroName} watchers are running: drop archives into an images dir to import and pin them.`);
  text(`Emulate ${b.distro === 'k3s' ? 'a k3s' : 'an RKE2'} (re)start on a node, from another terminal:`);
  command(`  npm run lab -- k3s-start ${b.nodes[0]!.name} --dir ${b.dir}`);
  out.push('Ctrl-C stops everything.');
  return out.join('\n');
}

/** The commands a banner prints, each with its ` \` continuation lines joined, trimmed. */
export function bannerCommands(banner: string): string[] {
  return banner
    .replace(/ \\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim());
}
