// A hostile or broken images dir (issue #51, items 3 and 8), on a real lab node over SSH:
// - a FIFO named .cache.json: no command hangs or calls the node unreachable, Holdfast never
//   opens it (no reader is left waiting on it), and an import is refused before any byte moves;
// - the images dir's own path broken (a dangling link, a loop, a link to a file): every command
//   says what is wrong with the path, instead of "the images dir is empty" or "may not write".
import { constants, existsSync, mkdirSync, openSync, closeSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { addLabNode, runCli, tempHome } from './support';

let lab: Lab;
let n: LabNodeHandle;
let home: string;
let archive: string;

const cli = (args: string[]) => runCli(args, { HOLDFAST_HOME: home }, 120_000);
const flat = (s: string) => s.replace(/\s+/g, ' ');

beforeAll(async () => {
  lab = await startLab({ nodes: ['fx1'] });
  n = lab.node('fx1');
  home = tempHome();
  await addLabNode(lab, n, home);
  archive = path.join(home, 'extra.tar');
  await writeImageArchive(archive, { format: 'oci', images: [{ name: 'registry.local/faults/extra:1' }] });
  await writeImageArchive(path.join(n.hostImagesDir, 'app.tar'), { format: 'oci', images: [{ name: 'registry.local/faults/app:1' }] });
  await emulateK3sStart(n);
});

afterAll(async () => {
  await lab?.stop();
});

/** Does anything hold the FIFO open for reading, or wait in open() to? A non-blocking writer's open tells. */
function fifoHasReader(fifo: string): boolean {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENXIO') return false;
    throw e;
  }
}

describe('a FIFO named .cache.json', () => {
  it('is never opened: every command returns, and an import is refused before a byte moves', async () => {
    const fifo = path.join(n.hostImagesDir, '.cache.json');
    execFileSync('mkfifo', [fifo]);
    try {
      const archives = await cli(['archives', 'fx1', '--why']);
      expect(archives.code, archives.stderr).toBe(0);
      expect(flat(archives.stdout)).toContain('.cache.json is not a regular file (a FIFO, socket or device): Holdfast never opens it');

      const images = await cli(['images', 'fx1']);
      expect(images.code, images.stderr).toBe(0);
      expect(images.stdout).toContain('registry.local/faults/app:1');

      const dry = await cli(['rm-archive', 'fx1', 'app.tar', '--dry-run']);
      expect(dry.stderr + dry.stdout).toContain('app.tar');
      expect([0, 3]).toContain(dry.code); // answered: safe or not, never a hang

      const inspect = await cli(['inspect', 'fx1']);
      expect(inspect.stdout).toContain('1 of 1 nodes reachable');

      const imp = await cli(['import', 'fx1', archive]);
      expect(imp.code).toBe(3);
      const said = flat(imp.stdout + imp.stderr);
      expect(said).toContain("k3s's import cache, .cache.json in the images dir of fx1, is not a regular file");
      expect(said).toContain('Replace it with a regular file');
      expect(said).toContain('Do what each failed line says');
      expect(existsSync(path.join(n.hostImagesDir, 'extra.tar'))).toBe(false);

      expect(fifoHasReader(fifo)).toBe(false); // no sftp-server left blocked in open()
    } finally {
      rmSync(fifo, { force: true });
    }
  });
});

describe("the images dir's own path, broken", () => {
  const cases = [
    { name: 'a dangling symlink', make: (dir: string) => symlinkSync('/nonexistent/images', dir), says: 'is a symlink that leads nowhere' },
    { name: 'a symlink loop', make: (dir: string) => symlinkSync(path.basename(dir), dir), says: 'is a symlink that leads nowhere' },
    {
      name: 'a symlink to a file',
      make: (dir: string) => {
        writeFileSync(`${dir}.file`, 'not a folder');
        symlinkSync(`${path.basename(dir)}.file`, dir);
      },
      says: 'is a symlink to a file, not to a folder',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: archives and upload say what is wrong with the path`, async () => {
      const dir = n.hostImagesDir;
      const aside = `${dir}.aside`;
      renameSync(dir, aside);
      try {
        c.make(dir);
        const archives = await cli(['archives', 'fx1']);
        expect(archives.code).toBe(2);
        expect(flat(archives.stderr)).toContain(`The images dir /var/lib/rancher/k3s/agent/images on fx1 ${c.says}`);
        expect(archives.stdout).not.toContain('empty');

        const upload = await cli(['upload', 'fx1', archive]);
        expect(upload.code).toBe(2);
        expect(flat(upload.stderr)).toContain(c.says);
        expect(flat(upload.stderr)).not.toMatch(/may not write|write access/i);
      } finally {
        rmSync(dir, { force: true });
        rmSync(`${dir}.file`, { force: true });
        renameSync(aside, dir);
        mkdirSync(dir, { recursive: true });
      }
    });
  }
});
