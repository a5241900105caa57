// The signature flags of `import` and `upload`, and the key flags `verify` shares with them
// (#48): keys, a trusted root, detached bundles and signature layouts are files on this machine,
// read there; nothing goes on the network. Keyless flags are cosign's names. The site's policy (--policy, else the home's) is
// applied by the service, so the app's imports obey it too.
import path from 'node:path';
import type { Command } from 'commander';
import type { SignatureOptions } from '../shared/importOptions';

/** The flags as commander parses them. */
export interface SignatureFlags {
  key?: string[];
  certificateIdentity?: string;
  certificateIdentityRegexp?: string;
  certificateOidcIssuer?: string;
  trustedRoot?: string;
  bundle?: string[];
  allowUnsigned?: boolean;
  strictReference?: boolean;
  policy?: string;
}

/** A repeatable file flag: every value, as an absolute path. */
const files = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), path.resolve(v)];

const KEY_HELP = 'verify every image against this cosign public key first (repeatable: any one key suffices)';
const BUNDLE_HELP = 'a detached Sigstore bundle (cosign sign --bundle), matched by the digest it signs (repeatable)';

/** The flags that say what to trust with a key: keys and detached bundles (verify; import's too). */
export function addTrustFlags(c: Command, keyHelp = KEY_HELP): Command {
  return c.option('--key <file>', keyHelp, files).option('--bundle <file>', BUNDLE_HELP, files);
}

/** `verify`'s own source of signatures: OCI layouts as technicians carry them. */
export function addLayoutFlag(c: Command): Command {
  return c.option('--signatures <path>', 'an OCI layout, a directory or an archive of one, holding signatures (legacy .sig tags, referrers; repeatable)', files);
}

export function addSignatureFlags(c: Command): Command {
  return c
    .option('--key <file>', KEY_HELP, files)
    .option('--certificate-identity <value>', "keyless: accept signatures whose certificate names exactly this identity (needs --certificate-oidc-issuer, --trusted-root)")
    .option('--certificate-identity-regexp <re>', 'keyless: accept signatures whose certificate identity matches this regular expression')
    .option('--certificate-oidc-issuer <value>', "keyless: the OIDC issuer the signer's certificate must name")
    .option('--trusted-root <file>', "keyless: the Sigstore trusted_root.json to verify against (CAs, logs, timestamp authorities; nothing is fetched)", (v: string) => path.resolve(v))
    .option('--bundle <file>', BUNDLE_HELP, files)
    .option('--allow-unsigned', 'import images that do not verify too, recorded as not verified')
    .option('--strict-reference', 'refuse an image whose legacy signature names another repository')
    .option('--policy <file>', "the site's signature policy (default: policy.yaml in Holdfast's home, if there is one)", (v: string) => path.resolve(v));
}

/** The contract's fields (jobs.startImport, jobs.startUpload) for the flags given. */
export function signatureRequest(o: SignatureFlags): SignatureOptions & { policy?: string } {
  return {
    ...(o.key?.length ? { keys: o.key } : {}),
    ...(o.certificateIdentity !== undefined ? { certificateIdentity: o.certificateIdentity } : {}),
    ...(o.certificateIdentityRegexp !== undefined ? { certificateIdentityRegexp: o.certificateIdentityRegexp } : {}),
    ...(o.certificateOidcIssuer !== undefined ? { certificateOidcIssuer: o.certificateOidcIssuer } : {}),
    ...(o.trustedRoot !== undefined ? { trustedRoot: o.trustedRoot } : {}),
    ...(o.bundle?.length ? { bundles: o.bundle } : {}),
    ...(o.allowUnsigned ? { allowUnsigned: true } : {}),
    ...(o.strictReference ? { strictReference: true } : {}),
    ...(o.policy ? { policy: o.policy } : {}),
  };
}
