// Image reference parsing and normalisation, following the grammar of the distribution
// reference library that containerd uses, so names come out exactly as containerd stores them:
//   app:1.0                  → docker.io/library/app:1.0
//   user/app:1               → docker.io/user/app:1
//   registry.local:5000/x/y:2 → unchanged
//   app                      → docker.io/library/app:latest
//   app:1@sha256:…           → docker.io/library/app@sha256:…   (a digest wins over a tag)
// CRI resolves a pod spec's image the same way, so the workload reading (shared/workloads) uses it too.

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
 * and path, `:latest` when there is neither tag nor digest, and a digest drops the tag.
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
