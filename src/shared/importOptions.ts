// The options of an import (pin, remove the archive) and the rule between them: removing the
// archive is only safe once its images are durably pinned, so never one without the other.
// One rule, applied by the service (jobs.startImport, which `holdfast import` calls too); the
// app's wizard keeps its options consistent with it.
// Also the home of the import's knobs and their defaults: one name each from the CLI flag
// (--parallel, --timeout) through the contract (jobs.startImport) down to the core that uses it.

export interface ImportOptions {
  pin: boolean;
  removeArchive: boolean;
  /**
   * Direct delivery (issue #35): the images go straight into each node's containerd, only the
   * blobs it lacks, pinned durably; no archive is put in the images dir.
   */
  direct?: boolean;
}

/** A keyless signer: the certificate's identity (exact, or a regular expression) and its OIDC issuer. */
export interface CertificateIdentity {
  identity?: string;
  identityRegexp?: string;
  issuer: string;
}

/** Who may vouch for an image: public key files (any one suffices), or keyless signers against a trusted root. */
export interface SignatureTrust {
  keys?: string[];
  identities?: CertificateIdentity[];
  trustedRoot?: string;
}

/**
 * A site policy's rule as it applies to an import (shared/signaturePolicy.ts): the images its
 * patterns cover must verify with its trust, whatever the flags say, unless it allows unsigned.
 */
export interface SignatureRule extends SignatureTrust {
  name: string;
  /** Globs over full references (shared/pinSet.ts patternRegExp). */
  images: string[];
  allowUnsigned?: boolean;
}

/**
 * Offline signature verification before anything is sent (#48): public key files (any one
 * suffices per image) or a keyless identity checked against a trusted root, detached bundles,
 * and what to do with images that do not verify. The flags fill the top level; a site policy
 * adds `rules`, which the flags never loosen.
 */
export interface SignatureOptions {
  keys?: string[];
  /** Keyless: the certificate's identity (SAN), exact; or a regular expression it must match. */
  certificateIdentity?: string;
  certificateIdentityRegexp?: string;
  /** Keyless: the OIDC issuer the certificate names (Fulcio's issuer extension), exact. */
  certificateOidcIssuer?: string;
  /** Keyless: a Sigstore trusted_root.json file, the only CAs, logs and timestamp authorities trusted. */
  trustedRoot?: string;
  bundles?: string[];
  /** Import unverified images too, marked as not verified (otherwise one refuses the archive). */
  allowUnsigned?: boolean;
  /** A legacy payload naming another repository than the imported name refuses the image. */
  strictReference?: boolean;
  /** The site policy's rules for the import's nodes (`--policy`, or the policy in Holdfast's home). */
  rules?: SignatureRule[];
}

/** Nodes an import works on at a time (`--parallel`, jobs.startImport's `parallel`). */
export const DEFAULT_IMPORT_PARALLEL = 4;
/** Seconds to wait, per node, for k3s to import the archive (`--timeout`, jobs.startImport's `timeout`). */
export const DEFAULT_IMPORT_TIMEOUT = 120;

/** How an import may be tuned; absent means the default above. */
export interface ImportTuning {
  parallel?: number;
  /** Seconds (not milliseconds: the unit the flag and the contract use). */
  timeout?: number;
}

/** Why these options cannot go together, or null. */
export function importOptionsProblem(o: ImportOptions): string | null {
  if (o.direct && o.removeArchive) return 'a direct delivery puts no archive on the node, so there is none to remove';
  return o.removeArchive && !o.pin ? 'removing the archive needs its pins made durable first: an archive is only removed once its images are durably pinned' : null;
}

/**
 * The options as the wizard keeps them: turning pins off turns removing the archive off; a direct
 * delivery always pins durably (the service sets the pin itself) and has no archive to remove.
 */
export function consistentImportOptions<T extends ImportOptions>(o: T): T {
  if (o.direct) return o.pin && !o.removeArchive ? o : { ...o, pin: true, removeArchive: false };
  return o.pin || !o.removeArchive ? o : { ...o, removeArchive: false };
}
