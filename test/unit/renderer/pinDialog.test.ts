// The pin dialog's preview says, as the CLI's `holdfast pin` does, when a .txt list in the images
// dir would hand the pins back to k3s at its next start (PinPlan.warnings, shared/listTrap).
// Rendered to markup by React itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { PinPlan } from '../../../src/shared/domain/pins';
import { listRepinsWarning } from '../../../src/shared/listTrap';
import { DurableNote, PlanView } from '../../../src/renderer/components/PinDialog';

const REF = 'docker.io/library/busybox:latest';

const plan = (warnings?: string[]): PinPlan => ({
  node: 'edge1',
  action: 'pin',
  changes: [
    {
      ref: REF,
      imageId: null,
      before: { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' },
      after: { 'io.cri-containerd.pinned': 'pinned', 'io.holdfast.pinned-from': 'busybox.txt' },
    },
  ],
  unchanged: [],
  ...(warnings ? { warnings } : {}),
});

/** The view's text as a person reads it (tags dropped, entities decoded, one space between words). */
const text = (p: PinPlan, applied = false, who = 'k3s'): string =>
  renderToStaticMarkup(createElement(PlanView, { plan: p, applied, who }))
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

describe('pin dialog: the .txt list trap', () => {
  it('the preview warns that a list hands the pins back to k3s, in the words the CLI uses', () => {
    const warning = listRepinsWarning('busybox.txt', [REF]);
    const shown = text(plan([warning]));
    expect(shown).toContain('These pins would not stay durable:');
    expect(shown).toContain(warning);
    expect(shown).toContain('remove busybox.txt first to keep the pin durable');
    // still said once applied: the list is still there
    expect(text(plan([warning]), true)).toContain('These pins will not stay durable:');
    expect(text(plan([warning]), true)).toContain(warning);
  });

  it('says each list once, and nothing when no list re-pins the images', () => {
    const a = listRepinsWarning('busybox.txt', [REF]);
    const b = listRepinsWarning('site/tools.txt', ['registry.local/tools/probe:1', 'registry.local/tools/probe:2']);
    const shown = text(plan([a, b]));
    expect(shown.split(a)).toHaveLength(2);
    expect(shown).toContain(b);
    const plain = text(plan());
    expect(plain).not.toContain('would not stay durable');
    expect(plain).not.toContain('pins again at every');
    expect(plain).toContain('1 reference will change on edge1');
  });
});

describe('pin dialog: what a durable pin does, in the node\'s distro', () => {
  const note = (who: string) =>
    renderToStaticMarkup(createElement(DurableNote, { who, imagesDir: '/var/lib/rancher/rke2/agent/images' }))
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ');
  it('names RKE2 on an RKE2 node, and k3s on a k3s node', () => {
    const rke2 = note('RKE2');
    expect(rke2).toContain('Holdfast removes the RKE2 label and keeps io.cri-containerd.pinned : RKE2 never touches that pin again.');
    expect(rke2).toContain('the next RKE2 start re-imports it and adds the RKE2 label back');
    expect(rke2).not.toMatch(/k3s/);
    expect(note('k3s')).toContain('the next k3s start re-imports it and adds the k3s label back');
  });
});

describe("pin dialog: each reference's pin, in the node's distro", () => {
  // What an RKE2 node's reference carries before the pin is made durable, and after.
  const rke2Plan: PinPlan = {
    ...plan(),
    changes: [
      {
        ref: REF,
        imageId: null,
        before: { 'io.cattle.rke2.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' },
        after: { 'io.cri-containerd.pinned': 'pinned' },
      },
    ],
  };
  it('the preview says "RKE2 pin → Durable" on an RKE2 node, never k3s', () => {
    const shown = text(rke2Plan, false, 'RKE2');
    expect(shown).toMatch(/RKE2 pin +Durable/);
    expect(shown).not.toMatch(/k3s/);
    // the badge's title too
    const html = renderToStaticMarkup(createElement(PlanView, { plan: rke2Plan, who: 'RKE2' }));
    expect(html).toContain('title="Pinned by RKE2: the pin is removed at the next RKE2 start unless the archive is re-imported."');
    expect(html).toContain('RKE2 never strips it');
    expect(text(rke2Plan, true, 'RKE2')).toMatch(/RKE2 pin +Durable/);
  });

  it('and "k3s pin → Durable" on a k3s node', () => {
    expect(text(plan(), false, 'k3s')).toMatch(/k3s pin +Durable/);
  });
});
