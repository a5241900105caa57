// A text file under an archive's name (a note, a list, the error page a failed download saved):
// refused as "not an image archive: … it starts with text …", never as "truncated … copy it
// again" (a short text file) or a bare "corrupt" — whatever suffix it carries. A real archive
// cut short stays "truncated".
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArchiveCompression } from '../../../../../src/shared/archiveSuffixes.ts';
import { textStart } from '../../../../../src/core/archives/format/decompress.ts';
import { ArchiveError, readArchiveIndex } from '../../../../../src/core/archives/format/readIndex.ts';
import { HoldfastError } from '../../../../../src/core/errors.ts';
import { readLocalArchive } from '../../../../../src/core/usecases/import/localArchive.ts';
import { chunked, compressWith, noise, packTar } from '../../../../support/archives.ts';

const SUFFIX: Record<ArchiveCompression, string> = { none: '.tar', gzip: '.tar.gz', zstd: '.tar.zst', bzip2: '.tar.bz2', lz4: '.tar.lz4' };
const DATA: Record<ArchiveCompression, string> = { none: 'a tar archive', gzip: 'gzip data', zstd: 'zstd data', bzip2: 'bzip2 data', lz4: 'lz4 data' };
const COMPRESSIONS = Object.keys(SUFFIX) as ArchiveCompression[];

const SHORT = 'hello world\nthis is a text file\n';
const HTML = '<!DOCTYPE html>\n<html><head><title>401 Unauthorized</title></head>\n' + '<p>Sign in to download this file.</p>\n'.repeat(40);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hf-not-archive-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refusal(name: string, data: Buffer | string): Promise<HoldfastError> {
  const file = join(dir, name);
  await writeFile(file, data);
  const e = await readLocalArchive(file).catch((x: unknown) => x);
  expect(e, `${name} must be refused`).toBeInstanceOf(HoldfastError);
  return e as HoldfastError;
}

describe('a text file named like an archive, through readLocalArchive (upload, import, the app)', () => {
  it.each(COMPRESSIONS)('x%s: short text is "not an image archive … starts with text", not "truncated … copy it again"', async (c) => {
    const name = `x${SUFFIX[c]}`;
    const e = await refusal(name, SHORT);
    expect(e.code).toBe('REFUSED');
    expect(e.message).toBe(`${name} was refused: not an image archive: it is not ${DATA[c]}: it starts with text ("hello world")`);
    expect(e.hint).toMatch(/^Nothing was sent\. Check that this is the file you meant/);
    expect(e.hint).not.toMatch(/copy it again/);
    expect((e.cause as ArchiveError).reason).toBe('not-an-image-archive');
  });

  it.each(COMPRESSIONS)('x%s: an error page longer than a tar header is "not an image archive", quoting its first line', async (c) => {
    const name = `page${SUFFIX[c]}`;
    const e = await refusal(name, HTML);
    expect(e.message).toBe(`${name} was refused: not an image archive: it is not ${DATA[c]}: it starts with text ("<!DOCTYPE html>")`);
  });

  it('text that was compressed (gzip notes.txt, then renamed notes.tar.gz): the stream holds no tar archive', async () => {
    const e = await refusal('notes.tar.gz', await compressWith(Buffer.from(HTML), 'gzip'));
    expect(e.message).toBe('notes.tar.gz was refused: not an image archive: the gzip stream holds no tar archive: it starts with text ("<!DOCTYPE html>")');
  });

  it('a long first line is cut in the message; a file of blank lines says so', async () => {
    const long = await refusal('long.tar', `${'abcdefghij'.repeat(10)}\n`);
    expect(long.message).toBe('long.tar was refused: not an image archive: it is not a tar archive: it starts with text ("abcdefghijabcdefghijabcdefghijabcdefghij…")');
    const blank = await refusal('blank.tar', '\n\n   \n');
    expect(blank.message).toBe('blank.tar was refused: not an image archive: it is not a tar archive: it starts with blank lines');
  });

  it('a real archive cut short is still "truncated … copy it again", and random bytes still "corrupt"', async () => {
    const whole = await packTar([{ name: 'a.json', data: '{}' }, { name: 'b.bin', data: Buffer.alloc(4000, 1) }]);
    const cut = await refusal('cut.tar', whole.subarray(0, 300));
    expect(cut.message).toMatch(/^cut\.tar was refused: truncated: /);
    expect(cut.hint).toMatch(/copy it again/);
    const noisy = await refusal('noise.tar', noise(50_000, 5));
    expect((noisy.cause as ArchiveError).reason).toBe('corrupt');
  });
});

describe('readArchiveIndex reads the start across small chunks', () => {
  it('text arriving 7 bytes at a time is still recognised', async () => {
    const e = await readArchiveIndex(chunked(Buffer.from(HTML), 7), { compression: 'none' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ArchiveError);
    expect((e as ArchiveError).reason).toBe('not-an-image-archive');
    expect((e as ArchiveError).message).toBe('not an image archive: it is not a tar archive: it starts with text ("<!DOCTYPE html>")');
  });
});

describe('textStart', () => {
  it('says what text starts with, and nothing for binary', () => {
    expect(textStart(Buffer.from('\uFEFF\n  café au lait  \nmore'))).toBe('text ("café au lait")');
    expect(textStart(Buffer.from('a\0b'))).toBeNull();
    expect(textStart(Buffer.from([0x1f, 0x8b, 0x08, 0x00]))).toBeNull();
    expect(textStart(Buffer.from('esc \u001b[31m red'))).toBeNull();
    expect(textStart(Buffer.alloc(0))).toBeNull();
  });

  it('a window cut inside a multi-byte character is still text; invalid UTF-8 is not', () => {
    const e = Buffer.from('ok é');
    expect(textStart(e.subarray(0, e.length - 1), { partial: true })).toBe('text ("ok")');
    expect(textStart(e.subarray(0, e.length - 1))).toBeNull();
    expect(textStart(Buffer.from([0x61, 0xff, 0x62]), { partial: true })).toBeNull();
  });
});
