// The site both guard suites set up on a lab node (guard.test: the CLI; guardImage.test: the
// container image): a pin set, an archive k3s pinned, images an operator imported by hand, and the
// checks of a durable pin in containerd's labels and in CRI's view.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { criPinned, emulateK3sStart, labelsOf, writeImageArchive, type LabNodeHandle } from '../../lab';

export const CRI = 'io.cri-containerd.pinned';
export const K3S = 'io.cattle.k3s.pinned';
export const A = 'registry.local/app/a:1'; // named by the set; from a.tar, so k3s-pinned
export const P = 'registry.local/pat/p:1'; // matched by the set's pattern; imported by hand, unpinned
export const O = 'docker.io/library/guard-other:1'; // outside the set: never touched
export const M = 'registry.local/app/missing:1'; // named by the set, never on the node

/** The pin set: A and M by name, the pattern P matches, and with `needed` the site's needs too. */
export function writePinSet(file: string, needed: boolean): void {
  const spec = [`  images: [${A}, ${M}]`, ...(needed ? ['  needed: true'] : []), '  patterns: ["registry.local/pat/*"]'];
  writeFileSync(file, ['apiVersion: holdfast/v1', 'kind: PinSet', 'metadata: {name: site}', 'spec:', ...spec, ''].join('\n'));
}

/** An image put on the node as an operator's `ctr images import` does: no pin label, no archive left. */
export async function ctrImport(n: LabNodeHandle, work: string, name: string): Promise<void> {
  const file = path.join(work, `${name.replace(/[^a-z0-9]+/gi, '_')}.tar`);
  await writeImageArchive(file, { format: 'docker', images: [{ name }] });
  await n.ctr(['images', 'import', ...(n.containerdLine === '2' ? ['--local'] : []), file]);
  expect(await labelsOf(n, name)).not.toHaveProperty(CRI);
}

/** A in an archive k3s imported and pinned at its start; P and O imported by hand. */
export async function seedGuardSite(n: LabNodeHandle, work: string): Promise<void> {
  await writeImageArchive(path.join(n.hostImagesDir, 'a.tar'), { format: 'docker', images: [{ name: A }] });
  await emulateK3sStart(n);
  expect(await labelsOf(n, A)).toMatchObject({ [K3S]: 'pinned', [CRI]: 'pinned' });
  await ctrImport(n, work, P);
  await ctrImport(n, work, O);
}

/** Durable: the CRI label without the distro's, and CRI reports it pinned where it honours pins. */
export async function expectDurable(n: LabNodeHandle, ref: string, honoured: boolean): Promise<void> {
  const labels = await labelsOf(n, ref);
  expect(labels[CRI], ref).toBe('pinned');
  expect(labels[K3S], ref).toBeUndefined();
  expect(await criPinned(n, ref, honoured), `${ref}: CRI's view`).toBe(honoured);
}

/** A guard textfile checked by promtool (Debian's prometheus), as `name{labels}` → value. */
export function textfileSamples(file: string): Map<string, number> {
  const text = readFileSync(file, 'utf8');
  execFileSync('promtool', ['check', 'metrics'], { input: text, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = new Map<string, number>();
  for (const line of text.trimEnd().split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^(\S+) (\S+)$/.exec(line)!;
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}
