// Image references, the one module for them. Two readings:
// - a name a person or an archive gives (`app:1`), parsed and normalised by the grammar of the
//   distribution reference library that containerd uses, so it comes out as containerd stores it
//   (`app` → docker.io/library/app:latest; a digest wins over a tag). CRI resolves a pod spec's
//   image the same way, so the workload reading (shared/workloads) uses it.
// - a reference containerd already stores (`repository[:tag][@digest]`), split the same way for
//   the fate rules, the version rules, the import's event filter and the renderer (splitReference).

const DEFAULT_DOMAIN = 'docker.io';
const LEGACY_DOMAIN = 'index.docker.io';
const OFFICIAL_PREFIX = 'library/';

// reference grammar (docker/distribution reference/regexp.go, restated):
const ALNUM = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const IPV6 = '\\[(?:[a-fA-F0-9:]+)\\]';
const DOMAIN_NAME = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*`;
const HOST = `(?:${DOMAIN_NAME}|${IPV6})`;
const DOMAIN = `${HOST}(?::[0-9]+)?`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const REFERENCE_RE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);
const ANCHORED_PATH = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const ANCHORED_DOMAIN = new RegExp(`^${DOMAIN}$`);
const HEX64 = /^[a-f0-9]{64}$/;
const NAME_MAX = 255;

export interface ParsedReference {
  domain: string;
  path: string;
  tag?: string;
  digest?: string;
}

export class ReferenceError extends Error {
  override name = 'ReferenceError';
}

/** Splits off the registry as the Docker CLI does: a first component is a registry only if it
 *  has a `.` or `:` or is `localhost` (and is lower case). */
function splitDomain(name: string): { domain: string; path: string } {
  const i = name.indexOf('/');
  const first = i === -1 ? '' : name.slice(0, i);
  let domain: string;
  let path: string;
  if (i === -1 || (!/[.:]/.test(first) && first !== 'localhost' && first.toLowerCase() === first)) {
    domain = DEFAULT_DOMAIN;
    path = name;
  } else {
    domain = first;
    path = name.slice(i + 1);
  }
  if (domain === LEGACY_DOMAIN) domain = DEFAULT_DOMAIN;
  if (domain === DEFAULT_DOMAIN && !path.includes('/')) path = OFFICIAL_PREFIX + path;
  return { domain, path };
}

/** Parses a possibly familiar reference (`app:1`) into its normalised parts; throws ReferenceError. */
export function parseReference(ref: string): ParsedReference {
  const s = ref.trim();
  if (s === '') throw new ReferenceError('empty image reference');
  if (HEX64.test(s)) throw new ReferenceError(`"${s}" is an image id, not a reference`);
  const m = REFERENCE_RE.exec(s);
  if (!m) {
    if (s !== s.toLowerCase() && REFERENCE_RE.test(s.toLowerCase())) {
      throw new ReferenceError(`"${s}": repository names must be lower case`);
    }
    throw new ReferenceError(`"${s}" is not a valid image reference`);
  }
  const { domain, path } = splitDomain(m[1]!);
  if (!ANCHORED_DOMAIN.test(domain) || !ANCHORED_PATH.test(path)) {
    throw new ReferenceError(`"${s}": repository names must be lower case`);
  }
  if (domain.length + 1 + path.length > NAME_MAX) throw new ReferenceError(`"${s}": repository name is longer than ${NAME_MAX} characters`);
  const out: ParsedReference = { domain, path };
  if (m[2]) out.tag = m[2];
  if (m[3]) out.digest = m[3];
  return out;
}

/**
 * The name containerd stores for a docker-save RepoTag (ParseDockerRef semantics): full domain
 * and path, `:latest` when there is neither tag nor digest, and a digest drops the tag:
 *     app:1.0                   → docker.io/library/app:1.0
 *     user/app:1                → docker.io/user/app:1
 *     registry.local:5000/x/y:2 → unchanged
 *     app                       → docker.io/library/app:latest
 *     app:1@sha256:…            → docker.io/library/app@sha256:…   (a digest wins over a tag)
 */
export function normalizeReference(ref: string): string {
  const p = parseReference(ref);
  const name = `${p.domain}/${p.path}`;
  if (p.digest) return `${name}@${p.digest}`;
  return `${name}:${p.tag ?? 'latest'}`;
}

/**
 * Is `ref` already a full reference as containerd would use it verbatim (an OCI ref.name such as
 * `registry.example/app:1`)? A bare tag like `1.0` or a familiar `app:1` is not.
 */
export function isFullReference(ref: string): boolean {
  const m = REFERENCE_RE.exec(ref);
  if (!m) return false;
  const name = m[1]!;
  const i = name.indexOf('/');
  if (i === -1) return false;
  const first = name.slice(0, i);
  return /[.:]/.test(first) || first === 'localhost';
}

// ---------------------------------------------------------------------------------------------
// References as containerd stores them (already normalised by whoever created them).

/** A tag or digest reference split as containerd names it: `repository[:tag][@digest]`. */
export interface ReferenceParts {
  repository: string;
  tag: string | null;
  digest: string | null;
}

const IMAGE_ID_RECORD = /^sha256:[0-9a-f]{64}$/;

/** null for CRI's `sha256:<id>` records, which name no repository. */
export function splitReference(name: string): ReferenceParts | null {
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
  return splitReference(name)?.repository ?? name;
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
 * image (`nginx` → `docker.io/library/nginx:latest`: normalizeReference). `alsoNamed`: names
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
