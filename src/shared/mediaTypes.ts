// OCI and Docker media types for the descriptors Holdfast walks.
export const INDEX_TYPES = new Set([
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
]);
export const MANIFEST_TYPES = new Set([
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
]);

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export function formatPlatform(p: Platform): string {
  return [p.os, p.architecture, p.variant].filter(Boolean).join('/');
}

/** Node architecture as `uname -m` prints it → OCI platform. */
export function platformFromUname(machine: string): Platform {
  const m = machine.trim();
  switch (m) {
    case 'x86_64':
    case 'amd64':
      return { os: 'linux', architecture: 'amd64' };
    case 'aarch64':
    case 'arm64':
      return { os: 'linux', architecture: 'arm64' };
    case 'armv7l':
    case 'armv7':
      return { os: 'linux', architecture: 'arm', variant: 'v7' };
    case 'armv6l':
      return { os: 'linux', architecture: 'arm', variant: 'v6' };
    case 'ppc64le':
    case 's390x':
    case 'riscv64':
      return { os: 'linux', architecture: m };
    case 'i686':
    case 'i386':
      return { os: 'linux', architecture: '386' };
    default:
      return { os: 'linux', architecture: m || 'amd64' };
  }
}

/** Does an index entry's platform serve the node? arm64 ignores a missing/"v8" variant. */
export function platformMatches(entry: Platform | undefined, want: Platform): boolean {
  if (!entry) return false;
  if (entry.os !== want.os || entry.architecture !== want.architecture) return false;
  if (want.architecture === 'arm64') return !entry.variant || entry.variant === 'v8';
  return (entry.variant ?? '') === (want.variant ?? '');
}
