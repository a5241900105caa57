// What k3s's importer makes of one (uncompressed) image archive, read the way containerd reads
// it, so the lab's emulation imports exactly that. k3s imports with containerd's client:
// `client.Import(reader, WithAllPlatforms(true), WithSkipMissing())` and NO image ref translator
// (k3s pkg/agent/containerd/containerd.go, preloadFile). In containerd (client/import.go,
// core/images/archive/importer.go, the same in 1.6, 1.7 and 2.x) that means:
//   - an `oci-layout` with a version makes the tar an OCI layout, even when a manifest.json is
//     there too (`ctr images export` writes both); otherwise manifest.json is docker-save;
//   - docker-save: one name per RepoTag, normalised (alpine → docker.io/library/alpine:latest);
//     an entry without RepoTags gets no name;
//   - OCI: each index.json entry is named by its `io.containerd.image.name` annotation, else by
//     its `org.opencontainers.image.ref.name` VERBATIM — a bare tag such as `1.0` becomes an
//     image named `1.0` — else not at all (its content is imported, no image is created);
//   - every platform's content is imported, and a manifest or index whose blob is not in the
//     archive is skipped (a partial `ctr images export`) instead of failing the import.
// `ctr images import` differs in two ways, which the emulation makes up for: it names a ref name
// without `/`, `:` or `@` `import-<date>:<ref>`, and it has no skip-missing option (so a partial
// archive is imported with `--platform` of the one platform it holds). Test tooling only.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';

export const ANNOTATION_IMAGE_NAME = 'io.containerd.image.name';
export const ANNOTATION_REF_NAME = 'org.opencontainers.image.ref.name';

const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);
const MANIFEST_TYPES = new Set(['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json']);
/** Manifests and indexes are small; anything bigger is a layer and never needs parsing. */
const KEEP_BYTES = 4 << 20;

interface Descriptor {
  mediaType?: string;
  digest: string;
  size?: number;
  platform?: { os?: string; architecture?: string; variant?: string };
  annotations?: Record<string, string>;
}

export interface ImportEntry {
  /** The index.json entry's target digest. */
  digest: string;
  /** The name k3s's importer stores for it; null when it stores none. */
  k3sName: string | null;
  /** Set when `ctr images import` names it `import-<date>:<refName>` instead of `refName`. */
  ctrRenames?: string;
}

export interface ImportPlan {
  format: 'oci' | 'docker';
  /** OCI only: one per index.json entry. */
  entries: ImportEntry[];
  /** The names k3s stores, in archive order, without duplicates. */
  names: string[];
  /** How ctr must be told to import every platform k3s imports: all, or the only one present. */
  platforms: { all: true } | { only: string };
}

/** Docker reference normalisation as containerd does it (alpine → docker.io/library/alpine:latest). */
export function normalizeDockerRef(ref: string): string {
  let domain: string;
  let rest: string;
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  if (slash < 0 || (!first.includes('.') && !first.includes(':') && first !== 'localhost')) {
    domain = 'docker.io';
    rest = ref;
  } else {
    domain = first;
    rest = ref.slice(slash + 1);
  }
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !rest.includes('/')) rest = `library/${rest}`;
  const full = `${domain}/${rest}`;
  if (full.includes('@')) return full;
  const lastSlash = full.lastIndexOf('/');
  return full.lastIndexOf(':') > lastSlash ? full : `${full}:latest`;
}

/** The name client.Import stores for an OCI index.json entry (imageName() without a translator). */
export function k3sEntryName(annotations: Record<string, string> | undefined): string | null {
  return annotations?.[ANNOTATION_IMAGE_NAME] || annotations?.[ANNOTATION_REF_NAME] || null;
}

interface TarContents {
  files: Map<string, Buffer>;
  /** Content digests of every regular file (containerd ingests each under its own digest). */
  digests: Set<string>;
  /** Small members by content digest (manifests, indexes, configs). */
  small: Map<string, Buffer>;
}

async function readTar(tarFile: string): Promise<TarContents> {
  const wanted = new Set(['manifest.json', 'index.json', 'oci-layout']);
  const files = new Map<string, Buffer>();
  const digests = new Set<string>();
  const small = new Map<string, Buffer>();
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    // containerd cleans member names (path.Clean): `./index.json` is index.json
    const name = header.name.replace(/^(?:\.\/)+/, '').replace(/\/+$/, '');
    if (header.type !== 'file' && header.type !== 'contiguous-file') {
      stream.on('end', () => next());
      stream.resume();
      return;
    }
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: unknown) => {
      const c = chunk as Buffer;
      hash.update(c);
      size += c.length;
      if (size <= KEEP_BYTES) chunks.push(c);
    });
    stream.on('end', () => {
      const data = size <= KEEP_BYTES ? Buffer.concat(chunks) : undefined;
      if (wanted.has(name) && data) files.set(name, data);
      const digest = `sha256:${hash.digest('hex')}`;
      // oci-layout and manifest.json are parsed, not ingested; index.json is ingested too
      if (name !== 'oci-layout' && name !== 'manifest.json') {
        digests.add(digest);
        if (data) small.set(digest, data);
      }
      next();
    });
  });
  await pipeline(createReadStream(tarFile), extract);
  return { files, digests, small };
}

const parse = (b: Buffer | undefined): unknown => {
  if (!b) return undefined;
  try {
    return JSON.parse(b.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
};

const platformString = (p: Descriptor['platform']): string | null =>
  p?.os && p.architecture ? [p.os, p.architecture, ...(p.variant ? [p.variant] : [])].join('/') : null;

/**
 * The platform filter ctr needs to import what k3s imports. k3s skips a manifest or index whose
 * blob is missing (config and layer blobs are never read on import, so missing ones fail
 * nothing); ctr cannot, so when blobs are missing the present manifests must all be of one
 * platform that none of the missing ones has, and ctr imports that platform only. Anything else
 * is an archive the lab cannot import as k3s would: that is an error, never a silent difference.
 */
function platformFilter(roots: Descriptor[], c: TarContents, file: string): ImportPlan['platforms'] {
  const present = new Set<string>();
  const missing: { digest: string; platform: string | null }[] = [];
  const walk = (d: Descriptor, depth: number): void => {
    if (depth > 8) throw new Error(`${file}: image indexes nested more than 8 deep`);
    const isIndex = d.mediaType ? INDEX_TYPES.has(d.mediaType) : false;
    const isManifest = d.mediaType ? MANIFEST_TYPES.has(d.mediaType) : false;
    if (!isIndex && !isManifest) return;
    if (!c.digests.has(d.digest)) {
      missing.push({ digest: d.digest, platform: platformString(d.platform) });
      return;
    }
    if (isManifest) {
      present.add(platformString(d.platform) ?? '(no platform)');
      return;
    }
    const body = parse(c.small.get(d.digest)) as { manifests?: Descriptor[] } | undefined;
    for (const child of body?.manifests ?? []) walk(child, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  if (missing.length === 0) return { all: true };
  const only = [...present];
  const clash = missing.find((m) => m.platform === null || m.platform === only[0]);
  if (only.length !== 1 || only[0] === '(no platform)' || clash) {
    throw new Error(
      `${file}: the lab cannot import this archive as k3s would: its manifests ${missing.map((m) => `${m.digest} (${m.platform ?? 'no platform'})`).join(', ')} are missing, and the ones present are of ${only.length ? only.join(', ') : 'no platform'}; ctr has no skip-missing, so the lab imports a partial archive only when exactly one other platform is present`,
    );
  }
  return { only: only[0]! };
}

/** Reads an uncompressed image archive as k3s's importer reads it. */
export async function readImportPlan(tarFile: string): Promise<ImportPlan> {
  const c = await readTar(tarFile);
  const layout = parse(c.files.get('oci-layout')) as { imageLayoutVersion?: string } | undefined;
  if (layout?.imageLayoutVersion) {
    const index = parse(c.files.get('index.json')) as { manifests?: Descriptor[] } | undefined;
    if (!index) throw new Error(`${tarFile}: OCI layout without a readable index.json`);
    const roots = index.manifests ?? [];
    const entries: ImportEntry[] = roots.map((m) => {
      const k3sName = k3sEntryName(m.annotations);
      const entry: ImportEntry = { digest: m.digest, k3sName };
      // ctr's default translator (archive.AddRefPrefix) keeps a ref name containing / : or @,
      // and prefixes any other: that is the one k3s names differently
      const viaRefName = !m.annotations?.[ANNOTATION_IMAGE_NAME] && k3sName !== null;
      if (viaRefName && !/[/:@]/.test(k3sName)) entry.ctrRenames = k3sName;
      return entry;
    });
    return {
      format: 'oci',
      entries,
      names: [...new Set(entries.flatMap((e) => (e.k3sName ? [e.k3sName] : [])))],
      platforms: platformFilter(roots, c, tarFile),
    };
  }
  const mfsts = parse(c.files.get('manifest.json')) as { RepoTags?: string[] | null }[] | undefined;
  if (!Array.isArray(mfsts)) throw new Error(`${tarFile}: unrecognized image format (neither an OCI layout nor a docker-save manifest.json)`);
  const names = mfsts.flatMap((m) => (m.RepoTags ?? []).map(normalizeDockerRef));
  return { format: 'docker', entries: [], names: [...new Set(names)], platforms: { all: true } };
}

// ---------------------------------------------------------------------------------------------
// After the import, k3s labels every name it imported, then retags each one (the
// `<repository>@<target digest>` reference, and extra registries) through parseNamedTagged:
// distribution/reference ParseNormalizedNamed, which must give a name:tag. A name that is not one
// (a bare tag `1.0` reads as the repository docker.io/library/1.0 with no tag; a digest-only
// name) stays pinned — labelling came first — and the file's import fails with this error.

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);

export type NamedTagged = { repository: string; tag: string } | { error: string };

/** k3s's parseNamedTagged: the normalised repository and tag of `name`, or Go's error text. */
export function parseNamedTagged(name: string): NamedTagged {
  if (/^[a-f0-9]{64}$/.test(name)) return { error: `invalid repository name (${name}), cannot specify 64-byte hexadecimal strings` };
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  let domain = 'docker.io';
  let rest = name;
  if (slash >= 0 && (/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first)) {
    domain = first;
    rest = name.slice(slash + 1);
  }
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !rest.includes('/')) rest = `library/${rest}`;
  const m = REFERENCE.exec(`${domain}/${rest}`);
  if (!m) return { error: 'invalid reference format' };
  if (!m[2]) return { error: `can't cast reference.${m[3] ? 'canonicalReference' : 'repository'} to NamedTagged` };
  return { repository: m[1]!, tag: m[2] };
}
