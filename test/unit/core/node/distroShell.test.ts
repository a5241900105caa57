// The shell built from the distro profiles (src/core/node/distroShell.ts), run by a real `sh`:
// which config file each distro word reads, and which word an unknown one becomes.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { configFilesShell, distroCase, knownDistroShell } from '../../../../src/core/node/distroShell';
import { DISTRO_PROFILES } from '../../../../src/shared/distro';

/** Runs `script` with `$1` = word; returns its stdout. */
const sh = (script: string, word: string) => execFileSync('sh', ['-c', script, 'test', word], { encoding: 'utf8' });

describe('distro shell', () => {
  it('reads the config file of the distro named, the assumed one for any other word', () => {
    // Only the line that picks the file: the rest reads /etc, which this machine need not have.
    const pick = configFilesShell('D', 'cat', { reportUnreadableDir: false })[0]!;
    const script = `D=$1\n${pick}\necho "$c"`;
    expect(sh(script, 'k3s')).toBe(`${DISTRO_PROFILES.k3s.configFile}\n`);
    expect(sh(script, 'rke2')).toBe(`${DISTRO_PROFILES.rke2.configFile}\n`);
    expect(sh(script, '')).toBe(`${DISTRO_PROFILES.k3s.configFile}\n`);
    expect(sh(script, 'rke2 ')).toBe(`${DISTRO_PROFILES.k3s.configFile}\n`);
  });

  it('keeps a distro word and makes any other the assumed distro', () => {
    const script = `D=$1\n${knownDistroShell('D')}\necho "$D"`;
    expect(sh(script, 'k3s')).toBe('k3s\n');
    expect(sh(script, 'rke2')).toBe('rke2\n');
    expect(sh(script, 'microk8s')).toBe('k3s\n');
    expect(sh(script, '')).toBe('k3s\n');
  });

  it('runs one arm per profile', () => {
    const script = `D=$1\n${distroCase('D', (p) => `echo ${p.displayName}`)}`;
    expect(sh(script, 'rke2')).toBe('RKE2\n');
    expect(sh(script, 'k3s')).toBe('k3s\n');
    expect(sh(script, 'other')).toBe('k3s\n');
  });
});
