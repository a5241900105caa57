// holdfast policy show — the site's signature policy rules (#48, shared/signaturePolicy.ts) that
// apply to a node by its group: the images each covers and who must have signed them. `import`
// and `upload` apply the same rules without a flag. Nothing is read from the node.
import type { Command } from 'commander';
import { holdfastHome } from '../../core/config/home';
import type { CertificateIdentity } from '../../shared/importOptions';
import type { Cli } from '../context';
import type { ColumnFit } from '../fit';
import { terminalSafe as safe } from '../format';
import { helpAfter } from '../help';
import { JSON_HELP, printedAsJson } from '../output';

/** A key a rule names: its path as written, the absolute path, and its fingerprint (null: unreadable). */
export interface PolicyKeyJson {
  path: string;
  file: string;
  fingerprint: string | null;
  error?: string;
}

export interface PolicyRuleJson {
  name: string;
  /** null: every node. */
  groups: string[] | null;
  images: string[];
  keys: PolicyKeyJson[];
  identities: CertificateIdentity[];
  trustedRoot: string | null;
  allowUnsigned: boolean;
}

/** What `policy show -o json` prints; `policy` is null when there is no policy file. */
export interface PolicyShowJson {
  node: string;
  group: string | null;
  policy: { file: string; name: string } | null;
  rules: PolicyRuleJson[];
}

const COLUMNS: readonly ColumnFit[] = [{ kind: 'fixed' }, { kind: 'ref', min: 20 }, { kind: 'text', min: 18 }, { kind: 'fixed' }];

const identityText = (i: CertificateIdentity): string => `${i.identity ?? `/${i.identityRegexp}/`} (issuer ${i.issuer})`;
const keyText = (k: PolicyKeyJson): string => `key ${k.path} ${k.fingerprint ? k.fingerprint.slice(0, 8) : '(cannot read)'}`;

export function policyShowText(cli: Cli, j: PolicyShowJson): string {
  const screen = cli.screen();
  const where = `${safe(j.node)}${j.group === null ? ' (no group)' : ` (group ${safe(j.group)})`}`;
  if (!j.policy) return screen.text(`no signature policy: imports to ${where} verify only what --key asks.`);
  const out = [`signature policy ${safe(j.policy.name)} (${safe(j.policy.file)}) for ${where}:`];
  if (j.rules.length === 0) out.push('  no rule applies to this node: imports verify only what --key asks.');
  else {
    const rows = j.rules.map((r) => [r.name, r.images, [...r.keys.map(keyText), ...r.identities.map(identityText)], r.allowUnsigned ? 'allowed' : 'refused']);
    out.push(screen.table(['RULE', 'IMAGES', 'SIGNED BY (ANY ONE)', 'UNSIGNED'], rows, COLUMNS));
    out.push('An image a rule covers must verify before anything is sent; --allow-unsigned does not override a rule. Images no rule covers import as without a policy.');
  }
  for (const r of j.rules) for (const k of r.keys.filter((x) => x.error)) out.push(`rule ${safe(r.name)}: key ${safe(k.path)}: ${safe(k.error!)}`);
  return screen.text(out.join('\n'));
}

/** The policy's rules for `node` (by its group), each key read to show its fingerprint. */
export async function policyShowJson(cli: Cli, node: string, given: string | undefined): Promise<PolicyShowJson> {
  const [{ loadPolicy }, { readPublicKey }, { ruleAppliesTo }] = await Promise.all([import('../../core/signatures/policy'), import('../../core/signatures/keys'), import('../../shared/signaturePolicy')]);
  const group = (await cli.store().get(node)).group ?? null;
  const loaded = await loadPolicy(holdfastHome(), given);
  if (!loaded) return { node, group, policy: null, rules: [] };
  const rules = loaded.policy.spec.rules.filter((r) => ruleAppliesTo(r, group ?? undefined));
  const key = async (p: string): Promise<PolicyKeyJson> => {
    const file = loaded.resolve(p);
    return readPublicKey(file).then(
      (k) => ({ path: p, file, fingerprint: k.fingerprint }),
      (e: unknown) => ({ path: p, file, fingerprint: null, error: e instanceof Error ? e.message : String(e) }),
    );
  };
  return {
    node,
    group,
    policy: { file: loaded.file, name: loaded.policy.metadata.name },
    rules: await Promise.all(
      rules.map(async (r) => ({
        name: r.name,
        groups: r.groups ?? null,
        images: r.images,
        keys: await Promise.all((r.keys ?? []).map(key)),
        identities: r.identities ?? [],
        trustedRoot: r.trustedRoot ? loaded.resolve(r.trustedRoot) : null,
        allowUnsigned: r.allowUnsigned === true,
      })),
    ),
  };
}

export function registerPolicyCommand(program: Command, cli: Cli): void {
  const policy = program
    .command('policy')
    .description("the site's signature policy: which images must be signed, and by whom, per node group")
    .addHelpText('after', helpAfter(['holdfast policy show lab1-n1', 'holdfast policy show --help']));
  policy
    .command('show')
    .summary('the signature policy rules that apply to a node')
    .description("The rules of the site's signature policy that apply to a node (by its group): the images each covers and the keys or identities that must have signed them. import and upload apply them without a flag.")
    .argument('<node>', 'the node')
    .option('--policy <file>', "the policy file (default: policy.yaml in Holdfast's home)")
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      helpAfter(
        ['holdfast policy show lab1-n1', 'holdfast policy show lab1-n1 --policy site-policy.yaml -o json'],
        ['A policy: apiVersion: holdfast/v1, kind: SignaturePolicy, metadata.name, and spec.rules, each with name, groups (absent: every node), images (globs: * and ? within a / segment, ** across), keys (paths relative to the policy file), and allowUnsigned.'],
      ),
    )
    .action(async (node: string, o: { policy?: string }) => {
      const j = await policyShowJson(cli, node, o.policy);
      if (printedAsJson(cli, j)) return;
      cli.io.out(policyShowText(cli, j));
    });
}
