// Image references as containerd stores them (`repository[:tag][@digest]`, already normalised by
// whoever created them), read the same way by the fate rules, the version rules, the import's
// event filter and the renderer. Docker-style short names from an archive's metadata are
// normalised elsewhere (shared/imageReference.ts), before they become such references.

/** A tag or digest reference split as containerd names it: `repository[:tag][@digest]`. */
export interface ParsedReference {
  repository: string;
  tag: string | null;
  digest: string | null;
}

const IMAGE_ID_RECORD = /^sha256:[0-9a-f]{64}$/;

/** null for CRI's `sha256:<id>` records, which name no repository. */
export function parseReference(name: string): ParsedReference | null {
  if (IMAGE_ID_RECORD.test(name)) return null;
  const at = name.indexOf('@');
  const base = at >= 0 ? name.slice(0, at) : name;
  const digest = at >= 0 ? name.slice(at + 1) : null;
  const colon = base.lastIndexOf(':');
  // A colon before the last slash is a registry port (registry.lan:5000/app), not a tag.
  const hasTag = colon > base.lastIndexOf('/');
  const repository = hasTag ? base.slice(0, colon) : base;
  if (!repository) return null;
  return { repository, tag: hasTag ? base.slice(colon + 1) : null, digest };
}

/**
 * `reg/path:tag` and `reg/path@sha256:…` → `reg/path`. A name with no repository (CRI's
 * `sha256:<id>` record) stands for itself, so it never matches a repository.
 */
export function repositoryOf(name: string): string {
  return parseReference(name)?.repository ?? name;
}

/** CRI's own record of an image, named by its id (`sha256:<64 hex>`) rather than a reference. */
export function isImageIdRecord(name: string): boolean {
  return IMAGE_ID_RECORD.test(name);
}

/**
 * The one name a person knows an image by, wherever one name is shown for it (the CLI's tables,
 * the app's disk, prune, log and fleet views): a tag reference, else a digest reference, else
 * CRI's id record; `key` when the image has no reference left.
 */
export function imageName(refs: readonly string[], key: string): string {
  return refs.find((r) => !isImageIdRecord(r) && !r.includes('@')) ?? refs.find((r) => !isImageIdRecord(r)) ?? refs[0] ?? key;
}
