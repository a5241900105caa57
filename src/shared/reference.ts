// Image references as containerd stores them (`repository[:tag][@digest]`, already normalised by
// whoever created them), read the same way by the fate rules, the version rules, the import's
// event filter and the renderer. Docker-style short names from an archive's metadata are
// normalised elsewhere (shared/imageReference.ts), before they become such references.
import { normalizeReference } from './imageReference';

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

/** What a name a person typed stands for among a node's references (findReference). */
export type ReferenceLookup =
  | { found: string }
  /** More than one reference fits: `message` names them ("\"app\" matches 3 references on n1: …"). */
  | { found: null; ambiguous: string }
  | { found: null; ambiguous: null };

/**
 * The one name on a node a typed `query` stands for, the same for every command that takes a
 * reference (explain, pin, unpin): the name itself; a name shortened with `…` (as a fitted table
 * shows it: its pieces in order); an image id or its first digits (as IMAGE ID shows it: the
 * image's tag, else CRI's record); a Docker-style short name, normalised as CRI resolves a pod's
 * image (`nginx` → `docker.io/library/nginx:latest`: shared/imageReference). `alsoNamed`: names
 * that count though the node lacks them (explain: a needed image). Pure.
 */
export function findReference(query: string, images: readonly { name: string; imageId: string | null }[], node: string, alsoNamed: readonly string[] = []): ReferenceLookup {
  const names = [...images.map((i) => i.name), ...alsoNamed];
  if (names.includes(query)) return { found: query };
  const one = (found: string[], how: string): ReferenceLookup | null => {
    const unique = [...new Set(found)];
    if (unique.length === 1) return { found: unique[0]! };
    if (unique.length > 1) return { found: null, ambiguous: `"${query}" ${how} ${unique.length} references on ${node}: ${unique.slice(0, 5).join(', ')}${unique.length > 5 ? ', …' : ''}` };
    return null;
  };
  // (… as an escape: the CLI bundle must stay ASCII, and esbuild leaves regular expressions as written.)
  const pieces = query.split(/\u2026|\.\.\./);
  if (pieces.length > 1) {
    const found = names.filter((n) => {
      if (!n.startsWith(pieces[0]!) || !n.endsWith(pieces[pieces.length - 1]!)) return false;
      let at = pieces[0]!.length;
      for (const p of pieces.slice(1, -1)) {
        const i = n.indexOf(p, at);
        if (i < 0) return false;
        at = i + p.length;
      }
      return at <= n.length - pieces[pieces.length - 1]!.length;
    });
    const hit = one(found, 'matches');
    if (hit) return hit;
  }
  const hex = /^(?:sha256:)?([0-9a-f]{6,64})$/.exec(query)?.[1];
  if (hex) {
    const ids = new Set(images.filter((i) => i.imageId?.startsWith(`sha256:${hex}`)).map((i) => i.imageId!));
    // One image: its tag stands for it (else its first reference).
    const found = [...ids].map((id) => imageName(images.filter((i) => i.imageId === id).map((i) => i.name), id));
    const hit = one(found, 'is the id of');
    if (hit) return hit;
  }
  try {
    const full = normalizeReference(query);
    if (names.includes(full)) return { found: full };
  } catch {
    // not a reference at all: not found
  }
  return { found: null, ambiguous: null };
}
