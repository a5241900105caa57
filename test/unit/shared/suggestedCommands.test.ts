// Every command Holdfast suggests (a remedy's `command`, or one quoted in a reason or a hint) hands
// a node's names to the shell as they are: a hostile node name, archive path or image reference
// parses back to the intended argv, in a real sh, and nothing in it runs (issue #49, item 20).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { kubeNodeHint } from '../../../src/cli/kubeNodeText';
import { cliProse, errorHint, imagesWhere, reasonWithRemedy, remedyCommand } from '../../../src/cli/remedyText';
import { whyHint } from '../../../src/cli/screen';
import { mayNotReadError } from '../../../src/core/access/refusals';
import { inImagesDir } from '../../../src/core/archives/imagesDirPath';
import { HoldfastError } from '../../../src/core/errors';
import { archiveRemedy } from '../../../src/shared/archiveRemedy';
import type { AuditEntry } from '../../../src/shared/domain/audit';
import type { ImageRef } from '../../../src/shared/domain/images';
import { explainReference } from '../../../src/shared/explain';
import { explainInWords } from '../../../src/cli/commands/explain';
import { importCacheReasons } from '../../../src/shared/importCacheHealth';
import { listTrapReason, listTrapRemedy } from '../../../src/shared/listTrap';
import { activeDurablePins, findLostPins, lostPinInWords, type CurrentRef } from '../../../src/shared/lostPins';
import { applyImageProtection, gcBoundReason } from '../../../src/shared/protection';
import { planPrune } from '../../../src/shared/prunePlan';
import { rke2ListsReason } from '../../../src/shared/rke2Lists';
import { id, store } from '../../support/diskStore';
import { imageRef } from '../../support/imageRef';

const NODE = "edge $(touch pwned) it's";
const ARCHIVE = 'x;touch${IFS}pwned;.tar.gz';
const REF = 'evil.io/app:1;touch${IFS}pwned';
const REF2 = 'evil.io/app:`id` (2)';

/**
 * The first `want.length` shell words of `text` from where `want`'s first two words start, as a
 * POSIX shell splits them: unquoted safe characters, '…' and \x; anything else (`;`, `$`, `(`…)
 * ends the command. Also returns the span those words cover.
 */
function wordsAt(text: string, want: readonly string[]): { argv: string[]; span: string } {
  const at = text.indexOf(`${want[0]} ${want[1]} `);
  expect(at, `"${want[0]} ${want[1]}" in: ${text}`).toBeGreaterThanOrEqual(0);
  const rest = text.slice(at);
  const argv: string[] = [];
  let i = 0;
  while (argv.length < want.length) {
    while (rest[i] === ' ') i++;
    let word = '';
    let started = false;
    for (;;) {
      const ch = rest[i];
      if (ch === "'") {
        const end = rest.indexOf("'", i + 1);
        if (end < 0) break;
        word += rest.slice(i + 1, end);
        i = end + 1;
      } else if (ch === '\\' && i + 1 < rest.length) {
        word += rest[i + 1];
        i += 2;
      } else if (ch !== undefined && /[A-Za-z0-9_@%+=:,./-]/.test(ch)) {
        word += ch;
        i++;
      } else break;
      started = true;
    }
    if (!started) break;
    argv.push(word);
    if (i < rest.length && rest[i] !== ' ') break;
  }
  return { argv, span: rest.slice(0, i) };
}

/** The argv a real sh sees for a command line (printf stands in for the command). */
function argvSeenBySh(line: string): string[] {
  const out = execFileSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

/** `text` names the command `want` (argv, program first), and a shell reads it so. */
function expectCommand(text: string | undefined, want: readonly string[]): void {
  expect(text).toBeDefined();
  const { argv, span } = wordsAt(text!, want);
  expect(argv).toEqual(want);
  expect(argvSeenBySh(span)).toEqual(want);
}

const image = (name: string, over: Partial<ImageRef> = {}): ImageRef =>
  imageRef(name, { mediaType: 'application/vnd.oci.image.index.v1+json', imageId: id('a'), size: 2048, ...over });

describe('suggested commands with hostile names', () => {
  it('the quoting helper reads them back itself (control: the parser and sh agree)', () => {
    expect(argvSeenBySh(`holdfast pin 'a;b' c`)).toEqual(['holdfast', 'pin', 'a;b', 'c']);
    expect(wordsAt('(holdfast pin x;touch pwned)', ['holdfast', 'pin', 'x;touch']).argv).toEqual(['holdfast', 'pin', 'x']);
  });

  it("an archive's remedy", () => {
    const r = archiveRemedy({ node: NODE, path: ARCHIVE, images: [{ name: REF, present: true, complete: true, durable: false, missing: [] }] });
    expectCommand(r && remedyCommand(r), ['holdfast', 'pin', NODE, '--archive', ARCHIVE]);
  });

  it("explain's advice", () => {
    const needs = { basis: 'known' as const, sources: [], notes: [], missing: [], atRisk: 0 };
    const missing = { ...needs, missing: [{ ref: REF, workloads: [], source: 'list' as const, because: 'listed', heldBy: [] }] };
    const absent = explainInWords(explainReference({ node: NODE, ref: REF, images: [], needs: missing, lost: [], archives: [], mode: 'any' })!);
    expectCommand(absent.advice[0]!.command, ['holdfast', 'import', NODE, 'ARCHIVE', '--pin']);

    const k3s = { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' };
    const refs = applyImageProtection([image(REF, { labels: k3s, pin: 'distro' })], 'any');
    const losing = explainInWords(explainReference({ node: NODE, ref: REF, images: refs, needs, lost: [], archives: [], mode: 'any' })!);
    expectCommand(losing.advice.find((a) => a.command)?.command, ['holdfast', 'pin', NODE, REF]);

    const atRisk = refs.map((r) => ({
      ...r,
      need: { verdict: 'losing' as const, atRisk: true, needed: true, basis: 'workload' as const, workloads: [], neededBecause: 'needed', because: 'needed; loses its pin' },
    }));
    const needed = explainInWords(explainReference({ node: NODE, ref: REF, images: atRisk, needs, lost: [], archives: [], mode: 'any' })!);
    expectCommand(needed.advice[0]!.command, ['holdfast', 'pin', NODE, '--needed']);
  });

  describe('lost pins', () => {
    const CRI = 'io.cri-containerd.pinned';
    const durable = { [CRI]: 'pinned', 'io.holdfast.pinned-by': 'tech', 'io.holdfast.pinned-at': '2026-03-01T08:00:00.000Z' };
    const k3sPinned = { [CRI]: 'pinned', 'io.cattle.k3s.pinned': 'pinned' };
    const pin = (refs: string[]): AuditEntry => ({
      time: '2026-03-01T08:00:00.000Z',
      user: 'tech',
      node: NODE,
      action: 'pin',
      changes: refs.map((r) => ({ ref: r, imageId: id('1'), before: k3sPinned, after: durable })),
    });
    const cur = (name: string, pinState: CurrentRef['pin'], labels: Record<string, string>): CurrentRef => ({ name, imageId: id('1'), labels, pin: pinState, createdAt: null });
    const lost = (audit: AuditEntry, refs: CurrentRef[], dir: { path: string; kind: 'archive'; images: string[] }[] = []) =>
      findLostPins({ node: NODE, pins: activeDurablePins([audit], NODE), refs, imagesDir: dir, info: null }).map((l) => lostPinInWords(l, remedyCommand));

    it('restore from an archive, re-import', () => {
      const [restore] = lost(pin([REF]), [], [{ path: ARCHIVE, kind: 'archive', images: [REF] }]);
      expectCommand(restore!.remedy.command, ['holdfast', 'pin', NODE, '--archive', ARCHIVE]);
      const [gone] = lost(pin([REF]), []);
      expectCommand(gone!.remedy.command, ['holdfast', 'import', NODE, 'FILE', '--pin']);
    });

    it('k3s-managed again: the re-pin and the rm-archive in its text', () => {
      const [l] = lost(pin([REF]), [cur(REF, 'distro', { ...k3sPinned, 'io.holdfast.pinned-by': 'tech' })], [{ path: ARCHIVE, kind: 'archive', images: [REF] }]);
      expectCommand(l!.remedy.command, ['holdfast', 'pin', NODE, REF]);
      expectCommand(cliProse(l!.remedy.text), ['holdfast', 'rm-archive', NODE, ARCHIVE]);
    });

    it('a deleted reference: the re-pin of what is left, and the ctr line that brings the name back', () => {
      const [l] = lost(pin([REF]), [cur(REF2, 'none', {})]);
      expectCommand(l!.remedy.command, ['holdfast', 'pin', NODE, REF2]);
      expectCommand(cliProse(l!.remedy.text), ['ctr', '-n', 'k8s.io', 'images', 'tag', REF2, REF]);
      const [label] = lost(pin([REF]), [cur(REF, 'none', {}), cur(REF2, 'durable', durable)]);
      expectCommand(label!.causes.join(' '), ['ctr', '-n', 'k8s.io', 'images', 'label', REF, `${CRI}=`]);
    });
  });

  it("RKE2's lists, the import cache, a .txt list's trap, CRI's record and containerd's GC labels", () => {
    expectCommand(rke2ListsReason(NODE, imagesWhere(NODE)), ['holdfast', 'images', NODE]);
    const health = { state: 'on' as const, repins: 'no' as const, rule: 'without-fix' as const, entries: 1, skippedUnpinned: [ARCHIVE], skippedRepinned: [], reimported: [], savesNothing: false, stale: [] };
    expectCommand(importCacheReasons(health, remedyCommand, NODE).join(' '), ['holdfast', 'pin', NODE, '--archive', ARCHIVE]);
    expectCommand(importCacheReasons({ ...health, state: 'absent', skippedUnpinned: [] }, remedyCommand, NODE).join(' '), ['holdfast', 'pin', NODE, '--needed']);
    expectCommand(reasonWithRemedy(listTrapReason(REF, { list: 'a.txt', listed: REF2 }), listTrapRemedy(REF), NODE), ['holdfast', 'pin', NODE, REF]);
    const [record] = applyImageProtection([image(id('a'), { imageId: id('a') }), image(REF, { pin: 'distro', afterRestart: 'pinned' })], 'first-loaded');
    expectCommand(reasonWithRemedy(record!.reason, record!.remedy, NODE), ['holdfast', 'pin', NODE, REF]);
    expectCommand(gcBoundReason(REF, { parent: null, expires: null }), ['ctr', '-n', 'k8s.io', 'images', 'tag', REF, 'NAME']);
  });

  it("prune's reasons to keep an image", () => {
    const { images, index } = store([
      { key: 'pinned', refs: [REF], blobs: [['o', 70]], pin: 'durable' },
      { key: 'lost', refs: [REF2], blobs: [['m', 3]], lostPin: true },
    ]);
    const kept = planPrune(NODE, images, index, { keepVersions: 2 }).kept;
    expectCommand(cliProse(kept.find((k) => k.key === 'pinned')!.text), ['holdfast', 'unpin', NODE, REF]);
    expectCommand(cliProse(kept.find((k) => k.key === 'lost')!.text), ['holdfast', 'pin', NODE, REF2]);
    expectCommand(cliProse(kept.find((k) => k.key === 'lost')!.text), ['holdfast', 'unpin', NODE, REF2]);
  });

  it("core's refusals and hints", () => {
    expectCommand(errorHint(mayNotReadError({ user: 'u', node: NODE, folder: '/d', imagesDir: '/d' })), ['holdfast', 'node', 'edit', NODE, '--sudo']);
    let hint: string | undefined;
    try {
      inImagesDir('/var/lib/rancher/k3s/agent/images', '/etc/passwd', NODE);
    } catch (e) {
      hint = e instanceof HoldfastError ? errorHint(e) : undefined;
    }
    expectCommand(hint, ['holdfast', 'archives', NODE]);
  });

  it("the CLI's pointer to explain (its REF placeholder runs into the prose's colon)", () => {
    expectCommand(whyHint(NODE), ['holdfast', 'explain', NODE]);
  });

  it("the CLI's way to map a node to its Kubernetes Node", () => {
    expectCommand(kubeNodeHint(NODE, { server: 'n1', nodes: ['a'], total: 1 }), ['holdfast', 'node', 'edit', NODE, '--k8s-node', 'NODE']);
  });
});
