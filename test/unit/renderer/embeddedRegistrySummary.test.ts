// The Images tab's one line on the node's embedded registry (renderer/components/Peers.tsx): absent
// on a plain node (off, nothing mirrored) even when its notes say registries.yaml is missing, since
// the registry plays no part there; present, without repeating itself, once anything is mirrored.
// Rendered to markup by React itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { EmbeddedRegistrySummary } from '../../../src/renderer/components/Peers';
import type { EmbeddedRegistryConfig } from '../../../src/shared/embeddedRegistry';

const text = (cfg: EmbeddedRegistryConfig): string =>
  renderToStaticMarkup(createElement(EmbeddedRegistrySummary, { cfg }))
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const MISSING = '/etc/rancher/rke2/registries.yaml does not exist';

describe('EmbeddedRegistrySummary', () => {
  it('says nothing on a plain node, whatever its notes', () => {
    expect(text({ enabled: 'off', from: null, mirrors: [], notes: [] })).toBe('');
    expect(text({ enabled: 'off', from: null, mirrors: [], notes: [MISSING] })).toBe('');
  });

  it('an off node that mirrors a registry: off, once, and where it was (not) set', () => {
    expect(text({ enabled: 'off', from: null, mirrors: ['docker.io'], notes: [] })).toBe('embedded registry: off · not set in its config');
  });

  it('an on node: what it mirrors and which file set it, with its notes', () => {
    const t = text({ enabled: 'on', from: '/etc/rancher/k3s/config.yaml', mirrors: ['docker.io'], notes: [MISSING] });
    expect(t).toContain('embedded registry: on, mirroring docker.io · set in /etc/rancher/k3s/config.yaml');
    expect(t).toContain(MISSING);
  });
});
