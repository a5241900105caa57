// holdfast verify — checks the images already on nodes against the signatures the technician
// carries (#48 item 6), records each verdict on the image as import does, and lists the images
// for which no valid signature was found. Nothing else on the node changes.
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import { signatureSentence, unverifiedImages, type NodeVerification, type NodeVerifyOutcome } from '../../shared/signatures';
import { plural } from '../../shared/wording';
import { savedNodeHint } from '../accessText';
import type { Cli } from '../context';
import { EXIT, exitCodeFor } from '../exit';
import { shortDigest } from '../format';
import { helpAfter } from '../help';
import { localNodeOf, withLocalOptions, type LocalFlags } from '../localNode';
import { selectNodes } from '../nodeSelection';
import { JSON_HELP, printedAsJson } from '../output';
import { Screen } from '../screen';
import { addLayoutFlag, addTrustFlags } from '../signatureFlags';

interface VerifyFlags extends LocalFlags {
  key?: string[];
  bundle?: string[];
  signatures?: string[];
  all?: boolean;
  group?: string;
  dryRun?: boolean;
}

/** One node's table (image, digest, verdict in plain words), its warnings and what failed. */
export function verificationText(v: NodeVerification, screen: Screen = Screen.plain): string {
  if (v.images.length === 0) return `${v.node}: no images`;
  const out: string[] = [`${v.node}:`];
  const rows = v.images.map((i) => [i.name, shortDigest(i.digest), signatureSentence(i.signature)]);
  out.push(screen.table(['IMAGE', 'DIGEST', 'SIGNATURE'], rows, [{ kind: 'ref' }, { kind: 'fixed', hide: 1, extra: true }, { kind: 'text', min: 24 }]));
  for (const i of v.images) if (i.warning) out.push(screen.text(`warning: ${i.name}: ${i.warning}`));
  return out.join('\n');
}

/** The node's summary: how many verified, whether recorded, and each image without a valid signature. */
export function verificationSummary(v: NodeVerification, screen: Screen = Screen.plain): string {
  const bad = unverifiedImages(v.images);
  const verified = v.images.length - bad.length;
  const recorded = v.dryRun ? 'nothing recorded (--dry-run)' : v.recorded ? `recorded on ${plural(v.recorded, 'reference')}` : 'the records were already so';
  const out = [`${v.node}: ${verified} of ${plural(v.images.length, 'image')} verified; ${recorded}`];
  if (bad.length) {
    out.push(`No valid signature for ${plural(bad.length, 'image')} on ${v.node}:`);
    for (const i of bad) out.push(`  ${screen.ref(i.name, 6)}: ${i.signature.verified ? '' : i.signature.reason}`);
  }
  return screen.text(out.join('\n'));
}

export function registerVerifyCommand(program: Command, cli: Cli): void {
  const cmd = program
    .command('verify')
    .summary('check the images on nodes against the signatures you carry')
    .description(
      'Verify the images already on nodes against cosign public keys, with the signatures you carry (OCI layouts, archives of one, detached bundles), on this machine. Each verdict is recorded on the image as at import; nothing else on the node changes. Exits 3 when an image has no valid signature.',
    )
    .argument('[nodes...]', 'nodes to verify (or --all, --group, --local)')
    .option('--all', 'every configured node')
    .option('--group <group>', 'the nodes of one group');
  addLayoutFlag(addTrustFlags(withLocalOptions(cmd), 'a cosign public key to verify against (repeatable: any one key suffices; needed)'))
    .option('--dry-run', 'check and print, record nothing on the node')
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast verify lab1-n1 --key cosign.pub --signatures signatures.tar',
          'holdfast verify --group site-a --key a.pub --key b.pub --dry-run',
          'holdfast verify lab1-n1 --key cosign.pub --bundle app.sigstore.json',
          'sudo holdfast verify --local --key cosign.pub --signatures /media/usb/oci',
        ],
        ['An image verifies when a signature verifies with a given key and signs exactly the digest containerd records for it (for an index, the index).', 'Each verdict replaces the one recorded before; --dry-run records nothing.'],
      ),
    )
    .action((names: string[], o: VerifyFlags) => runVerify(cli, names, o));
}

async function nodesToVerify(cli: Cli, names: string[], o: VerifyFlags): Promise<string[]> {
  if (o.local && (o.all || o.group)) throw new HoldfastError('INVALID_INPUT', '--local reads this machine: not with --all or --group');
  const local = await localNodeOf(cli, o, names);
  if (local) return [local];
  if (!names.length && !o.all && !o.group) throw new HoldfastError('INVALID_INPUT', 'name the nodes to verify, or give --all, --group G or --local');
  return (await selectNodes(cli, names, o)).map((d) => d.name);
}

async function runVerify(cli: Cli, names: string[], o: VerifyFlags): Promise<void> {
  if (!o.key?.length) throw new HoldfastError('INVALID_INPUT', 'verify needs a key to verify with (--key FILE)', { hint: 'Give the cosign public key the images were signed with; --key repeats.' });
  const nodes = await nodesToVerify(cli, names, o);
  const outcomes = await cli.call('signatures.verify', {
    nodes,
    keys: o.key,
    ...(o.bundle?.length ? { bundles: o.bundle } : {}),
    ...(o.signatures?.length ? { layouts: o.signatures } : {}),
    ...(o.dryRun ? { dryRun: true } : {}),
  });
  const screen = cli.screen();
  if (!printedAsJson(cli, outcomes)) {
    for (const r of outcomes) if (r.ok) cli.io.out(verificationText(r, screen));
    // The summaries last, so a fleet run reads at a glance.
    for (const r of outcomes) {
      if (r.ok) cli.io.out(verificationSummary(r, screen));
      else {
        const hint = savedNodeHint(r.error);
        cli.io.out(screen.text(`${r.node}: FAILED — ${r.error.message}${hint ? ` ${hint}` : ''}`));
      }
    }
  }
  exitFor(outcomes);
}

/** Exit 1 when a node could not be checked (3 when every such node refused), else 3 when an image did not verify. */
function exitFor(outcomes: readonly NodeVerifyOutcome[]): void {
  const failed = outcomes.filter((r) => !r.ok);
  if (failed.length) {
    const refused = failed.every((r) => exitCodeFor(r.error.code) === EXIT.REFUSED);
    throw new HoldfastError(refused ? 'REFUSED' : 'INTERNAL', `verify failed on ${failed.map((r) => r.node).join(', ')}`);
  }
  const bad = outcomes.flatMap((r) => (r.ok ? unverifiedImages(r.images).map(() => r.node) : []));
  if (bad.length) throw new HoldfastError('REFUSED', `${plural(bad.length, 'image')} on ${[...new Set(bad)].join(', ')} ${bad.length === 1 ? 'has' : 'have'} no valid signature`);
}
