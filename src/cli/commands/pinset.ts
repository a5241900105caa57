// holdfast pinset show — what a pin set (#50, shared/pinSet.ts) selects on a node and what keeping
// it would change there: the resolution against the node's references, needs and lost pins, and
// the pin plan `holdfast guard` would apply (nothing is changed).
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import type { LabelChange, PinPlan } from '../../shared/domain/pins';
import type { PinSetEntry, PinSetResolution, PinSetSignatures } from '../../shared/pinSet';
import { isImageIdRecord } from '../../shared/imageReference';
import { lostPinKindText } from '../../shared/lostPins';
import { pinNotHonoured } from '../../shared/nodeWarnings';
import type { Cli } from '../context';
import type { ColumnFit } from '../fit';
import { terminalSafe as safe } from '../format';
import { helpAfter } from '../help';
import { localNodeOf, withLocalOptions } from '../localNode';
import { JSON_HELP, printedAsJson } from '../output';

/** What `pinset show -o json` prints. */
export interface PinSetShowJson {
  node: string;
  pinSet: string;
  /** The set's spec.signatures, when it has one; entries failing it carry `unverified`. */
  signatures?: PinSetSignatures;
  entries: PinSetEntry[];
  unmatched: string[];
  changes: LabelChange[];
  warnings?: string[];
}

export function pinSetShowJson(node: string, pinSet: string, r: PinSetResolution, plan: PinPlan, signatures?: PinSetSignatures): PinSetShowJson {
  return { node, pinSet, ...(signatures ? { signatures } : {}), entries: r.entries, unmatched: r.unmatched, changes: plan.changes, ...(plan.warnings?.length ? { warnings: plan.warnings } : {}) };
}

const STATE_TEXT: Record<PinSetEntry['state'], string> = { durable: 'durable', pin: 'to pin', missing: 'MISSING' };
const COLUMNS: readonly ColumnFit[] = [{ kind: 'ref', min: 30 }, { kind: 'fixed' }, { kind: 'fixed' }, { kind: 'text', min: 16, hide: 1 }];

/** One clause: why the state, for the NOTE column. */
function note(e: PinSetEntry): string {
  if (e.lost) return `durable pin lost: ${lostPinKindText(e.lost)}`;
  if (e.state === 'missing') return 'not on the node: import it';
  if (e.unverified) return `NOT VERIFIED: ${e.unverified} (pinned anyway)`;
  return '';
}

export function pinSetShowText(cli: Cli, j: PinSetShowJson): string {
  const screen = cli.screen();
  const out: string[] = [`pin set ${safe(j.pinSet)} on ${safe(j.node)}:`];
  const required = signatureRequirementText(j.signatures);
  if (required) out.push(`  ${safe(required)}`);
  if (j.entries.length === 0) out.push('  it selects nothing on this node');
  else out.push(screen.table(['REFERENCE', 'VIA', 'STATE', 'NOTE'], j.entries.map((e) => [e.ref, e.via.join(','), STATE_TEXT[e.state], note(e)]), COLUMNS));
  for (const p of j.unmatched) out.push(`pattern ${safe(p)} matches no reference here`);
  // CRI's own sha256:<id> records are pinned with their image: counted, not listed.
  const named = j.changes.filter((c) => !isImageIdRecord(c.ref));
  const n = j.changes.length;
  out.push(n ? `guard would make ${n} reference${n === 1 ? '' : 's'} durable (with CRI's records of their images):` : 'guard would change nothing');
  for (const c of named) out.push(`  ${screen.ref(safe(c.ref), 2)}`);
  const missing = j.entries.filter((e) => e.state === 'missing').length;
  if (missing) out.push(`${missing} named image${missing === 1 ? ' is' : 's are'} not on the node: guard reports ${missing === 1 ? 'it' : 'them'}, and cannot pin ${missing === 1 ? 'it' : 'them'}.`);
  const unverified = j.entries.filter((e) => e.unverified).length;
  if (unverified) out.push(`${unverified} reference${unverified === 1 ? ' fails' : 's fail'} the signature requirement: guard pins ${unverified === 1 ? 'it' : 'them'} all the same (the site needs ${unverified === 1 ? 'it' : 'them'}) and reports ${unverified === 1 ? 'it' : 'them'} unverified.`);
  for (const w of j.warnings ?? []) out.push(`warning: ${safe(w)}`);
  return screen.text(out.join('\n'));
}

/** The requirement in words, for `pinset show`: "verified signature required (key 3f1c2a4b…, ops@example.org (…))". */
function signatureRequirementText(req: PinSetSignatures | undefined): string | null {
  if (!req?.required) return null;
  const named = [...(req.keys ?? []).map((k) => `key ${k.slice(0, 8)}…`), ...(req.identities ?? [])];
  return `verified signature required${named.length ? ` by ${named.join(' or ')}` : ''}`;
}

export function registerPinsetCommand(program: Command, cli: Cli): void {
  const pinset = program
    .command('pinset')
    .description('pin sets: the images every node of a group keeps durable (holdfast guard)')
    .addHelpText('after', helpAfter(['holdfast pinset show lab1-n1 --pin-set site.yaml', 'holdfast pinset show --help']));
  const show = pinset
    .command('show')
    .summary('what a pin set selects on a node, and what guard would change')
    .description("What a pin set selects on a node (its images, the site's needed images, its patterns), which are durable, which guard would pin, and which the node lacks. Nothing is changed.")
    .argument('[node]', 'the node (none with --local)')
    .requiredOption('--pin-set <file>', 'the pin set file (YAML or JSON, apiVersion holdfast/v1, kind PinSet)')
    .option('--json', JSON_HELP);
  withLocalOptions(show)
    .addHelpText(
      'after',
      helpAfter(
        ['holdfast pinset show lab1-n1 --pin-set site.yaml', 'holdfast pinset show --local --pin-set /etc/holdfast/pinset.yaml', 'holdfast pinset show lab1-n1 --pin-set site.yaml -o json'],
        [
          'A pin set: apiVersion: holdfast/v1, kind: PinSet, metadata.name, and spec.images (references), spec.needed (true: every image the site needs) and spec.patterns (globs: * and ? within a / segment, ** across); optionally spec.signatures: {required: true, keys: [fingerprint], identities: ["identity (issuer)"]}.',
        ],
      ),
    )
    .action(async (name: string | undefined, o) => {
      // zod and the pin set rules load only when a pin set is read, not for --help (lazyLoad.test.ts).
      const { readPinSetFile, resolveOnNode } = await import('../pinSetFile');
      const set = await readPinSetFile(o.pinSet as string);
      const node = (await localNodeOf(cli, o, name ? [name] : [])) ?? name;
      if (!node) throw new HoldfastError('INVALID_INPUT', 'name a node, or give --local on the node itself');
      const { resolution } = await resolveOnNode(cli, node, set);
      const plan = await cli.call('pins.plan', { node, action: 'pin', target: { pinSet: set.spec } });
      const ignored = pinNotHonoured(node, await cli.call('nodes.info', { node }).catch(() => null));
      if (ignored) cli.io.err(`warning: ${ignored}`);
      const j = pinSetShowJson(node, set.metadata.name, resolution, plan, set.spec.signatures);
      if (printedAsJson(cli, j)) return;
      cli.io.out(pinSetShowText(cli, j));
    });
}
