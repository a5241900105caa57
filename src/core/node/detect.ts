// What runs on a node: parsed from `k3s --version` / `rke2 --version` output (pure, so it is
// tested against recorded real output).
import type { Distro } from '../../shared/domain';

/**
 * `k3s --version` prints e.g.
 *   k3s version v1.31.6+k3s1 (6ab750f9)
 *   go version go1.22.12
 * and `rke2 --version`
 *   rke2 version v1.31.6+rke2r1 (0b3cf7a9d2fd6b6c6ff5e3ab2cfb3a3a0a4e8c44)
 *   go version go1.22.12 X:boringcrypto
 */
export function parseDistroVersion(distro: Exclude<Distro, 'unknown'>, output: string): string | null {
  const re = distro === 'k3s' ? /^k3s version (v\d+\.\d+\.\d+\S*)/m : /^rke2 version (v\d+\.\d+\.\d+\S*)/m;
  return re.exec(output)?.[1] ?? null;
}

/** Prints `uname -m`, then `@@k3s` or `@@rke2` and that binary's `--version` output. */
export const PROBE_SCRIPT = [
  'uname -m',
  'for b in k3s rke2; do for p in "$b" "/usr/local/bin/$b"; do',
  '  if out=$("$p" --version 2>/dev/null); then echo "@@$b"; echo "$out"; exit 0; fi',
  'done; done',
  'exit 0',
].join('\n');

export function parseProbe(stdout: string): { machine: string; distro: Distro; distroVersion: string | null } {
  const [machine = '', ...rest] = stdout.split('\n');
  const text = rest.join('\n');
  for (const distro of ['k3s', 'rke2'] as const) {
    const at = text.indexOf(`@@${distro}\n`);
    if (at >= 0) return { machine: machine.trim(), distro, distroVersion: parseDistroVersion(distro, text.slice(at)) };
  }
  return { machine: machine.trim(), distro: 'unknown', distroVersion: null };
}
