// The fake nodes' catalogue for UI tests, as plain data: edge-01's images in every pin state
// and every fate at the next k3s start (a digest reference sharing its image with a tag, pins at
// risk), its archives and audit log, edge-02's redis, edge-03's drifted set, generated references
// for performance runs, and the host-key fingerprints and password the fake SSH layer answers
// with. test/doubles/data.ts turns it into node state (test/doubles/node.ts); the derived fields (pin,
// afterRestart, reason, archive, safeToRemove, imported) only describe the intended story and are
// ignored there: the real service derives its own.
import { createHash } from 'node:crypto';
import type { ArchiveInfo } from '../../src/shared/domain/archives';
import type { AuditEntry } from '../../src/shared/domain/audit';
import type { ImageRef } from '../../src/shared/domain/images';

export const FINGERPRINT = 'SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8';
export const OLD_FINGERPRINT = 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s';

export const sha = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;

export function img(p: Partial<ImageRef> & Pick<ImageRef, 'name' | 'pin'>): ImageRef {
  return {
    digest: sha('d'),
    mediaType: 'application/vnd.oci.image.index.v1+json',
    imageId: sha('0'),
    size: 1024,
    platforms: ['linux/amd64'],
    createdAt: '2025-01-01T00:00:00Z',
    labels: {},
    afterRestart: p.pin === 'none' ? 'unpinned' : 'pinned',
    reason: '',
    archive: null,
    ...p,
  };
}

/** A tag and the digest reference CRI adds beside it (`repo@digest`): the same image, named twice. */
function withDigestRef(tag: ImageRef): ImageRef[] {
  const repo = tag.name.slice(0, tag.name.lastIndexOf(':'));
  return [tag, { ...tag, name: `${repo}@${tag.digest}` }];
}

export const REASONS = {
  durable: 'Durable pin: k3s never removes io.cri-containerd.pinned, so it survives every restart.',
  reimported: (a: string) => `Pinned by k3s; ${a} is still in the images dir and is re-imported at start, which pins it again.`,
  noArchive: 'Pinned by k3s, but no archive in the images dir brings it: the next k3s start removes the pin.',
  cached: (a: string) =>
    `${a} is listed unchanged in .cache.json: k3s v1.31.6 clears the pin and skips the archive (no cache fix in 1.31), so nothing pins it again.`,
  unpinned: 'Not pinned, and no archive in the images dir brings it.',
  gain: (a: string) => `Not pinned now; k3s imports ${a} at its next start and pins it.`,
  removed: (a: string) => `${a} was removed: the next k3s start clears the k3s pin and nothing pins it again.`,
} as const;

const AIRGAP = 'k3s-airgap-images-amd64.tar.zst';
const APPS = 'apps/apps.tar.gz';
const TOOLS = 'tools/busybox.tar';
const NODE_EXPORTER = 'node-exporter-v1.8.2.tar';

export const CRI = { 'io.cri-containerd.pinned': 'pinned', 'io.cri-containerd.image': 'managed' };
export const K3S = { ...CRI, 'io.cattle.k3s.pinned': 'pinned' };

/** Two k3s-pinned images whose archive .cache.json lists unchanged: both lose their pin at the next start. */
const CACHED_IN_APPS = { labels: K3S, pin: 'distro', afterRestart: 'unpinned', reason: REASONS.cached(APPS), archive: APPS } as const;

export const EDGE1_IMAGES: ImageRef[] = [
  ...withDigestRef(
    img({
      name: 'docker.io/library/nginx:1.27.3',
      digest: sha('a1'),
      imageId: sha('4e'),
      size: 72_405_113,
      platforms: ['linux/amd64', 'linux/arm64', 'linux/arm/v7'],
      createdAt: '2024-11-26T18:42:08Z',
      labels: CRI,
      pin: 'durable',
      reason: REASONS.durable,
    }),
  ),
  ...withDigestRef(
    img({
      name: 'docker.io/rancher/mirrored-pause:3.6',
      digest: sha('b2'),
      imageId: sha('6f'),
      size: 301_463,
      platforms: ['linux/amd64', 'linux/arm64'],
      createdAt: '2021-08-11T16:06:45Z',
      labels: K3S,
      pin: 'distro',
      reason: REASONS.reimported(AIRGAP),
      archive: AIRGAP,
    }),
  ),
  img({
    name: 'docker.io/rancher/mirrored-coredns-coredns:1.12.0',
    digest: sha('c3'),
    imageId: sha('1c'),
    size: 20_948_217,
    createdAt: '2024-10-15T11:02:31Z',
    labels: K3S,
    pin: 'distro',
    afterRestart: 'unpinned',
    reason: REASONS.noArchive,
  }),
  img({
    name: 'docker.io/rancher/klipper-helm:v0.9.3-build20241008',
    digest: sha('c4'),
    imageId: sha('5a'),
    size: 61_204_992,
    createdAt: '2024-10-08T10:00:00Z',
    ...CACHED_IN_APPS,
  }),
  img({
    name: 'docker.io/rancher/local-path-provisioner:v0.0.30',
    digest: sha('c5'),
    imageId: sha('5b'),
    size: 18_874_368,
    createdAt: '2024-09-20T08:30:00Z',
    ...CACHED_IN_APPS,
  }),
  img({
    name: 'registry.site.lan/acme/telemetry-agent:2.4.1',
    digest: sha('e5'),
    imageId: sha('9b'),
    size: 148_211_004,
    createdAt: '2025-02-03T09:15:00Z',
    labels: { 'io.cri-containerd.image': 'managed', 'org.opencontainers.image.vendor': 'Acme Field Systems' },
    pin: 'none',
    reason: REASONS.unpinned,
  }),
  img({
    name: 'docker.io/library/busybox:1.36',
    digest: sha('f6'),
    imageId: sha('3a'),
    size: 2_160_406,
    platforms: ['linux/386', 'linux/amd64', 'linux/arm/v6', 'linux/arm/v7', 'linux/arm64', 'linux/ppc64le'],
    createdAt: null,
    labels: {},
    pin: 'none',
    afterRestart: 'pinned',
    reason: REASONS.gain(TOOLS),
    archive: TOOLS,
  }),
  img({
    name: 'quay.io/prometheus/node-exporter:v1.8.2',
    digest: sha('a7'),
    imageId: sha('7d'),
    size: 11_627_520,
    createdAt: '2024-07-14T12:00:00Z',
    labels: CRI,
    pin: 'durable',
    reason: REASONS.durable,
    archive: NODE_EXPORTER,
  }),
];

export const EDGE2_IMAGES: ImageRef[] = [
  img({
    name: 'docker.io/library/redis:7.4',
    digest: sha('b8'),
    imageId: sha('2b'),
    size: 41_000_000,
    labels: K3S,
    pin: 'distro',
    reason: REASONS.reimported('redis.tar'),
    archive: 'redis.tar',
  }),
];

export const MIB = 1024 * 1024;

/** Archives of edge-01 as first listed; safeToRemove/reason are recomputed from the images. */
export const EDGE1_ARCHIVES: ArchiveInfo[] = [
  {
    path: AIRGAP,
    kind: 'archive',
    compression: 'zstd',
    size: 183 * MIB + 421_337,
    mtime: '2025-03-02T07:41:10Z',
    images: ['docker.io/rancher/mirrored-pause:3.6', `docker.io/rancher/mirrored-pause@${sha('b2')}`],
    imported: true,
    safeToRemove: false,
    reason: '',
    cachedByK3s: false,
  },
  {
    path: APPS,
    kind: 'archive',
    compression: 'gzip',
    size: 79 * MIB + 12_003,
    mtime: '2025-02-11T15:20:00Z',
    images: ['docker.io/rancher/klipper-helm:v0.9.3-build20241008', 'docker.io/rancher/local-path-provisioner:v0.0.30'],
    imported: true,
    safeToRemove: false,
    reason: '',
    cachedByK3s: true,
  },
  {
    path: TOOLS,
    kind: 'archive',
    compression: 'none',
    size: 2_170_880,
    mtime: '2025-03-04T09:12:44Z',
    images: ['docker.io/library/busybox:1.36'],
    imported: true,
    safeToRemove: false,
    reason: '',
    cachedByK3s: false,
  },
  {
    path: NODE_EXPORTER,
    kind: 'archive',
    compression: 'none',
    size: 11_642_880,
    mtime: '2024-07-20T12:00:00Z',
    images: ['quay.io/prometheus/node-exporter:v1.8.2'],
    imported: true,
    safeToRemove: true,
    reason: '',
    cachedByK3s: false,
  },
  {
    path: 'prepull.txt',
    kind: 'prepull',
    compression: null,
    size: 58,
    mtime: '2025-01-15T10:00:00Z',
    images: ['docker.io/library/alpine:3.20'],
    imported: false,
    safeToRemove: true,
    reason: 'A pre-pull list pins nothing: removing it loses no pin.',
    cachedByK3s: false,
  },
  {
    path: 'broken.tar.gz',
    kind: 'archive',
    compression: 'gzip',
    size: 1 * MIB,
    mtime: '2025-03-05T18:02:00Z',
    images: [],
    imported: false,
    safeToRemove: false,
    reason: 'Its index could not be read, so Holdfast cannot tell what removing it loses.',
    cachedByK3s: false,
    error: 'unexpected end of gzip stream at byte 1048576',
  },
  {
    path: 'README.md',
    kind: 'ignored',
    compression: null,
    size: 912,
    mtime: '2024-12-01T09:00:00Z',
    images: [],
    imported: false,
    safeToRemove: true,
    reason: 'k3s ignores this file: removing it changes nothing.',
    cachedByK3s: false,
  },
];

export const EDGE1_AUDIT: AuditEntry[] = [
  {
    time: '2025-03-01T08:15:02Z',
    user: 'tech',
    node: 'edge-01',
    action: 'pin',
    changes: [
      {
        ref: 'docker.io/library/nginx:1.27.3',
        imageId: sha('4e'),
        before: K3S,
        after: CRI,
      },
      {
        ref: `docker.io/library/nginx@${sha('a1')}`,
        imageId: sha('4e'),
        before: K3S,
        after: CRI,
      },
    ],
  },
  {
    time: '2025-03-01T08:17:40Z',
    user: 'tech',
    node: 'edge-01',
    action: 'rm-archive',
    forced: true,
    archive: { path: 'old/nginx-1.25.tar', size: 70 * MIB, sha256: sha('9f') },
    note: 'Forced: docker.io/library/nginx:1.25.4 was not durably pinned.',
  },
  {
    time: '2025-02-20T14:03:11Z',
    user: 'ops',
    node: 'edge-01',
    action: 'unpin',
    changes: [
      {
        ref: 'registry.site.lan/acme/telemetry-agent:2.4.0',
        imageId: sha('9a'),
        before: CRI,
        after: { 'io.cri-containerd.image': 'managed' },
      },
    ],
  },
];


/** The image Holdfast pinned on edge-01 in the lostPins scenario that someone deleted since. */
export const DELETED_REF = 'registry.site.lan/acme/metrics-exporter:0.9';

/** The password the fake's password-authenticated node accepts. */
export const FAKE_PASSWORD = 'correct-horse-battery-staple-42';

/** edge-03 in the fake fleet: edge-01 with one image missing, one pinned differently, one extra. */
export function edge3Images(): ImageRef[] {
  const base = structuredClone(EDGE1_IMAGES).filter((i) => !i.name.startsWith('docker.io/rancher/mirrored-coredns-coredns'));
  for (const i of base) {
    if (i.name.startsWith('docker.io/library/nginx')) {
      i.pin = 'none';
      i.afterRestart = 'unpinned';
      i.labels = {};
      i.reason = REASONS.unpinned;
    }
  }
  base.push(
    img({
      name: 'registry.site.lan/acme/telemetry-agent:2.5.0',
      digest: sha('e5'),
      imageId: sha('7e'),
      size: 48_000_000,
      labels: CRI,
      pin: 'durable',
      reason: REASONS.durable,
    }),
  );
  return base;
}

/** `count` references: about two per image (a tag and its digest reference), every pin state and fate. */
export function generateRefs(count: number): ImageRef[] {
  const out: ImageRef[] = [];
  const pins: ImageRef['pin'][] = ['durable', 'distro', 'distro', 'none'];
  for (let i = 0; out.length < count; i++) {
    const id = createHash('sha256').update(`img-${i}`).digest('hex');
    const digest = createHash('sha256').update(`man-${i}`).digest('hex');
    const pin = pins[i % pins.length]!;
    const afterRestart = pin === 'durable' || (pin === 'distro' && i % 3 === 0) ? 'pinned' : 'unpinned';
    const repo = `registry.site.lan/team-${i % 37}/service-${i}`;
    const base: Omit<ImageRef, 'name'> = {
      digest: `sha256:${digest}`,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      imageId: `sha256:${id}`,
      size: 5_000_000 + ((i * 7919) % 400_000_000),
      platforms: i % 5 === 0 ? ['linux/amd64', 'linux/arm64'] : ['linux/amd64'],
      createdAt: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString(),
      labels: pin === 'durable' ? { 'io.cri-containerd.pinned': 'pinned' } : pin === 'distro' ? { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' } : {},
      pin,
      afterRestart,
      reason: afterRestart === 'pinned' ? 'Durable pin: k3s never touches it.' : 'Its archive is gone: the next k3s start removes the pin.',
      archive: null,
    };
    out.push({ ...base, name: `${repo}:1.${i % 10}.${i % 7}` });
    if (out.length < count) out.push({ ...base, name: `${repo}@sha256:${digest}` });
  }
  return out;
}
