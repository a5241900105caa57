// The Archives tab says, on an RKE2 node whose images dir has no archive at its top level, that
// RKE2 writes its own image lists there (shared/rke2Lists); never on k3s. Rendered to markup by
// React itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Rke2ListsBanner } from '../../../src/renderer/components/ArchivesPanel';
import type { Distro } from '../../../src/shared/domain/nodes';

const text = (distro: Distro, files: string[]): string =>
  renderToStaticMarkup(createElement(Rke2ListsBanner, { node: 'edge1', distro, files }))
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();

describe('Rke2ListsBanner', () => {
  it('on RKE2 with no top-level archive: the short clause, then what happens and what to do', () => {
    for (const files of [[], ['runtime-image.txt', '.cache.json'], ['site/apps.tar']]) {
      const t = text('rke2', files);
      expect(t).toMatch(/^No archive at the top level: RKE2 writes its own image lists here at its next start\. /);
      expect(t).toContain('so at every start RKE2 writes its own <component>-image.txt lists there');
      expect(t).toContain('Keep an archive at the top level of the images dir');
      expect(t).toContain('once RKE2 has written them, on the Images tab.');
      expect(t).not.toContain('holdfast images');
    }
  });

  it('nothing with an archive at the top level, nor on k3s', () => {
    expect(text('rke2', ['apps.tar', 'a.txt'])).toBe('');
    expect(text('k3s', [])).toBe('');
    expect(text('unknown', ['a.txt'])).toBe('');
  });
});
