// Which of an archive's images a node already holds (shared/archiveHoldings): by CRI's name and
// the image id, so the import wizard ticks only the nodes that lack something.
import { describe, expect, it } from 'vitest';
import { holdingsOf, holdingsText, holdsEverything, type ArchiveImageKey, type NodeImageKey } from '../../../src/shared/archiveHoldings.ts';

const id = (c: string) => `sha256:${c.repeat(64)}`;
const WEB: ArchiveImageKey = { name: 'docker.io/library/site-web:2.4', configDigests: [id('a')] };
const WORKER: ArchiveImageKey = { name: 'docker.io/library/site-worker:2.4', configDigests: [id('b')] };
// A multi-platform image: the node's reference carries the config digest of its own platform.
const MULTI: ArchiveImageKey = { name: 'registry.local/tools/probe:1', configDigests: [id('c'), id('d')] };

describe('what a node holds of an archive', () => {
  it.each<[string, readonly ArchiveImageKey[], readonly NodeImageKey[], number, string[]]>([
    ['an empty node lacks every image', [WEB, WORKER], [], 2, [WEB.name!, WORKER.name!]],
    ['the same name and image id: held', [WEB, WORKER], [{ name: WEB.name!, imageId: id('a') }, { name: WORKER.name!, imageId: id('b') }], 2, []],
    ['one of two held', [WEB, WORKER], [{ name: WEB.name!, imageId: id('a') }], 2, [WORKER.name!]],
    // An older image under the same tag: the import replaces it, so the node lacks this one.
    ['the same name on another image id: not held', [WEB], [{ name: WEB.name!, imageId: id('9') }], 1, [WEB.name!]],
    // The same content under another name: pods asking for the archive's name would not find it.
    ['the same image id under another name: not held', [WEB], [{ name: 'docker.io/library/other:1', imageId: id('a') }], 1, [WEB.name!]],
    // CRI resolves a short name as containerd stores a docker-save RepoTag.
    ['a short archive name matches the node\'s normalised one', [{ name: 'site-web:2.4', configDigests: [id('a')] }], [{ name: WEB.name!, imageId: id('a') }], 1, []],
    ['a short node name matches the archive\'s normalised one', [WEB], [{ name: 'site-web:2.4', imageId: id('a') }], 1, []],
    ['docker.io/app is docker.io/library/app', [{ name: 'docker.io/site-web:2.4', configDigests: [id('a')] }], [{ name: WEB.name!, imageId: id('a') }], 1, []],
    ['any platform of a multi-platform image', [MULTI], [{ name: MULTI.name!, imageId: id('d') }], 1, []],
    ['a reference whose image id is unknown holds nothing', [WEB], [{ name: WEB.name!, imageId: null }], 1, [WEB.name!]],
    ['CRI\'s sha256:<id> record names no image', [WEB], [{ name: id('a'), imageId: id('a') }], 1, [WEB.name!]],
    ['an image the archive leaves unnamed is not counted', [WEB, { name: null, configDigests: [id('e')] }], [{ name: WEB.name!, imageId: id('a') }], 1, []],
    ['an image with no complete platform cannot be held', [{ name: WEB.name!, configDigests: [] }], [{ name: WEB.name!, imageId: id('a') }], 1, [WEB.name!]],
    // Two archives bringing the same image count it once; lacking names keep the archives' order.
    ['the same image in two archives counts once', [WORKER, WEB, { name: 'site-web:2.4', configDigests: [id('a')] }], [], 2, [WORKER.name!, WEB.name!]],
  ])('%s', (_, images, node, total, lacking) => {
    const h = holdingsOf(images, node);
    expect(h).toEqual({ known: true, total, lacking });
    expect(holdsEverything(h)).toBe(lacking.length === 0);
  });

  it('a node whose images were never read is unknown: it may lack anything', () => {
    const h = holdingsOf([WEB], null);
    expect(h).toEqual({ known: false });
    expect(holdsEverything(h)).toBe(false);
  });

  it('archives that name no image leave nothing to hold: no node holds everything', () => {
    const h = holdingsOf([{ name: null, configDigests: [id('e')] }], [{ name: WEB.name!, imageId: id('e') }]);
    expect(h).toEqual({ known: true, total: 0, lacking: [] });
    expect(holdsEverything(h)).toBe(false);
    expect(holdingsText(h)).toBe('the archives name no image');
  });
});

describe('what a node holds, in words', () => {
  it.each<[string, ReturnType<typeof holdingsOf>, string]>([
    ['every image', { known: true, total: 2, lacking: [] }, 'has all 2 images'],
    ['the one image', { known: true, total: 1, lacking: [] }, 'has the image'],
    ['some', { known: true, total: 2, lacking: [WORKER.name!] }, 'lacks 1 of 2 images: docker.io/library/site-worker:2.4'],
    ['one of one', { known: true, total: 1, lacking: [WEB.name!] }, 'lacks 1 of 1 image: docker.io/library/site-web:2.4'],
    ['more than three: counted', { known: true, total: 5, lacking: ['a:1', 'b:1', 'c:1', 'd:1', 'e:1'] }, 'lacks 5 of 5 images: a:1, b:1, c:1, 2 more'],
    ['unknown', { known: false }, 'images not read yet'],
  ])('%s', (_, h, text) => {
    expect(holdingsText(h)).toBe(text);
  });
});
