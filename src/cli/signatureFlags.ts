// The signature flags `import` and `upload` share (#48): keys and detached bundles are files on
// this machine, read there before anything is sent; nothing goes on the network. The site's
// policy (--policy, else the home's) is applied by the service, so the app's imports obey it too.
import path from 'node:path';
import type { Command } from 'commander';
import type { SignatureOptions } from '../shared/importOptions';

/** The flags as commander parses them. */
export interface SignatureFlags {
  key?: string[];
  bundle?: string[];
  allowUnsigned?: boolean;
  strictReference?: boolean;
  policy?: string;
}

/** A repeatable file flag: every value, as an absolute path. */
const files = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), path.resolve(v)];

export function addSignatureFlags(c: Command): Command {
  return c
    .option('--key <file>', "verify every image against this cosign public key first (repeatable: any one key suffices)", files)
    .option('--bundle <file>', "a detached Sigstore bundle (cosign sign --bundle), matched by the digest it signs (repeatable)", files)
    .option('--allow-unsigned', 'import images that do not verify too, recorded as not verified')
    .option('--strict-reference', 'refuse an image whose legacy signature names another repository')
    .option('--policy <file>', "the site's signature policy (default: policy.yaml in Holdfast's home, if there is one)", (v: string) => path.resolve(v));
}

/** The contract's fields (jobs.startImport, jobs.startUpload) for the flags given. */
export function signatureRequest(o: SignatureFlags): SignatureOptions & { policy?: string } {
  return {
    ...(o.key?.length ? { keys: o.key } : {}),
    ...(o.bundle?.length ? { bundles: o.bundle } : {}),
    ...(o.allowUnsigned ? { allowUnsigned: true } : {}),
    ...(o.strictReference ? { strictReference: true } : {}),
    ...(o.policy ? { policy: o.policy } : {}),
  };
}
