// Writes that cannot leave the images dir. uploadTarget() already refuses `..` and absolute
// names, but a folder inside the images dir may be a symlink to anywhere (another disk, /etc):
// a write through it would land outside — as root, under sudo — where k3s never imports from.
// So the folder an upload writes into is resolved ON THE NODE (realpath: SFTP's, or
// `sudo -n realpath -e`) and compared with the images dir's own realpath (which may itself be a
// symlink, e.g. a data-dir moved to another disk): before anything is looked at, just before the
// file is opened, and again before the rename.
import path from 'node:path';
import type { FileAccess } from '../../access';
import { HoldfastError } from '../../errors';
import { isInside, type UploadTarget } from '../../access/paths';

export class Containment {
  private root: Promise<string | null> | undefined;

  constructor(
    private readonly files: FileAccess,
    private readonly imagesDir: string,
    private readonly target: UploadTarget,
    private readonly node: string,
  ) {}

  /** The images dir's canonical path (null while it does not exist yet: nothing below it can either). */
  private rootReal(): Promise<string | null> {
    this.root ??= this.files.realpath(this.imagesDir).then((r) => {
      if (r === null) this.root = undefined; // created later by mkdirp: ask again then
      return r;
    });
    return this.root;
  }

  /**
   * The deepest existing folder between the images dir and the target's folder must resolve
   * inside the images dir (the part not created yet can only be created under it).
   */
  async checkExisting(): Promise<void> {
    const root = await this.rootReal();
    if (root === null) return;
    const base = this.imagesDir.replace(/\/+$/, '') || '/';
    for (let d = this.target.remoteDir; ; d = path.posix.dirname(d)) {
      const real = await this.files.realpath(d);
      if (real !== null) return this.compare(d, real, root, 'before the upload');
      if (d === base || path.posix.dirname(d) === d) return;
    }
  }

  /** The target's folder exists and resolves inside the images dir (before open and rename). */
  async checkDir(when: string): Promise<void> {
    const root = await this.rootReal();
    const real = await this.files.realpath(this.target.remoteDir);
    if (root === null || real === null) {
      throw new HoldfastError('REFUSED', `${this.target.remoteDir} on ${this.node} disappeared ${when}; nothing was written there.`, {
        hint: 'Something on the node removed or moved the folder: check it, then run the upload again.',
      });
    }
    this.compare(this.target.remoteDir, real, root, when);
  }

  private compare(dir: string, real: string, root: string, when: string): void {
    if (isInside(root, real)) return;
    throw new HoldfastError(
      'REFUSED',
      `${dir} on ${this.node} resolves to ${real} (checked ${when}), outside the images dir (${root}); Holdfast writes ${this.target.relPath} only inside it.`,
      {
        hint: 'A symbolic link in the images dir leads elsewhere (k3s does not import from there either). Upload under a path without the link, or fix the link on the node.',
      },
    );
  }
}
