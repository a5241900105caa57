import { describe, expect, it } from 'vitest';
import { ARCHIVE_SUFFIXES, classifyImagesDirPath } from '../../../../src/shared/archiveSuffixes';
import { HoldfastError } from '../../../../src/core/errors';
import {
  formatBytes,
  normaliseSha256,
  parseDfAvailable,
  parseSha256sum,
  safetyMargin,
  stagingName,
  uploadTarget,
} from '../../../../src/core/access/paths';

const DIR = '/var/lib/rancher/k3s/agent/images';

describe('uploadTarget', () => {
  it('puts the staging file next to the final one under a hidden, ignored name', () => {
    expect(uploadTarget(DIR, 'apps/web.tar.zst')).toEqual({
      relPath: 'apps/web.tar.zst',
      remotePath: `${DIR}/apps/web.tar.zst`,
      stagingPath: `${DIR}/apps/.web.tar.zst.holdfast-partial`,
      remoteDir: `${DIR}/apps`,
    });
    expect(uploadTarget(DIR + '/', 'a.tar').remotePath).toBe(`${DIR}/a.tar`);
  });

  it.each(['', '/etc/passwd', '../x.tar', 'a/../../x.tar', 'a//b.tar', './a.tar', 'a\\b.tar', 'x\0.tar', '.a.tar.holdfast-partial'])(
    'refuses %j',
    (name) => {
      expect(() => uploadTarget(DIR, name)).toThrow(HoldfastError);
    },
  );
});

describe('stagingName', () => {
  it('is ignored by k3s for every supported suffix and for pre-pull lists', () => {
    for (const s of [...ARCHIVE_SUFFIXES, '.txt', '']) {
      const n = stagingName(`app${s}`);
      expect(n).toBe(`.app${s}.holdfast-partial`);
      expect(classifyImagesDirPath(n).kind).toBe('ignored');
    }
  });
});

describe('remote output parsing', () => {
  const hex = 'ab'.repeat(32);
  it('reads sha256sum output, escaped names included', () => {
    expect(parseSha256sum(`${hex}  /x/a.tar\n`)).toBe(hex);
    expect(parseSha256sum(`\\${hex}  /x/a\\nb.tar\n`)).toBe(hex);
    expect(parseSha256sum('sha256sum: /x: No such file or directory\n')).toBeNull();
    expect(parseSha256sum('')).toBeNull();
  });

  it('reads the available column of df -Pk, whatever the file-system name', () => {
    const out = 'Filesystem     1024-blocks    Used Available Capacity Mounted on\n/dev/vda 263174212 26214400 81788716      25% /\n';
    expect(parseDfAvailable(out)).toBe(81788716 * 1024);
    expect(parseDfAvailable('Filesystem 1024-blocks Used Available Capacity Mounted on\nmy fs 8192 0 8192 0% /var/lib/rancher/k3s/agent/images\n')).toBe(8192 * 1024);
    expect(parseDfAvailable('df: /nope: No such file or directory\n')).toBeNull();
  });

  it('normalises expected digests', () => {
    expect(normaliseSha256('sha256:' + hex.toUpperCase())).toBe(hex);
    expect(normaliseSha256(` ${hex}\n`)).toBe(hex);
    expect(() => normaliseSha256('abc')).toThrow(/not a SHA-256 digest/);
  });
});

describe('safetyMargin and formatBytes', () => {
  it('keeps 1 % of the file system, between 64 MiB and 1 GiB', () => {
    const MiB = 1024 * 1024;
    expect(safetyMargin(null)).toBe(64 * MiB);
    expect(safetyMargin(8 * MiB)).toBe(64 * MiB);
    expect(safetyMargin(20_000 * MiB)).toBe(200 * MiB);
    expect(safetyMargin(10 * 1024 * 1024 * MiB)).toBe(1024 * MiB);
  });

  it('formats sizes for messages', () => {
    expect(formatBytes(17)).toBe('17 B');
    expect(formatBytes(12 * 1024 * 1024)).toBe('12 MiB');
    expect(formatBytes(1.5 * 1024 ** 3)).toBe('1.5 GiB');
    expect(formatBytes(210 * 1024 * 1024)).toBe('210 MiB');
  });
});
