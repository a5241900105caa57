// The remove dialog and the Archives tab never show a green "Safe to remove… loses nothing" beside
// a warning of what the removal sets off (RKE2 writing its own lists): one rule decides the tone
// (shared/removalVerdict), the CLI's `rm-archive --dry-run` reads it too. Rendered to markup by
// React itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { RemovalCell } from '../../../src/renderer/components/ArchivesPanel';
import { RemovalVerdictView } from '../../../src/renderer/components/RemoveArchiveDialog';
import type { ArchiveInfo, RemovalCheck } from '../../../src/shared/domain/archives';
import { removalVerdict } from '../../../src/shared/removalVerdict';
import { rke2ListsRemovalWarning } from '../../../src/shared/rke2Lists';

const WARNING = rke2ListsRemovalWarning('edge1', 'runtime.tar');
const image = { name: 'docker.io/rancher/mirrored-pause:3.6', present: true, complete: true, durable: true, missing: [] };
const check = (over: Partial<RemovalCheck> = {}): RemovalCheck => ({ node: 'edge1', path: 'runtime.tar', allowed: true, problems: [], images: [image], ...over });

const markup = (c: RemovalCheck) => renderToStaticMarkup(createElement(RemovalVerdictView, { check: c, busy: false, onMakeDurable() {} }));
/** The markup's text as a person reads it (tags dropped, entities decoded, one space between words). */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

describe('the remove dialog: its verdict', () => {
  it('allowed, with an RKE2-lists warning standing: a warning tone, never "safe… loses nothing"', () => {
    const html = markup(check({ warnings: [WARNING] }));
    expect(html).not.toContain('callout-success');
    expect(html).toMatch(/class="callout callout-warning" data-testid="removal-allowed" data-tone="caution"/);
    const t = text(html);
    expect(t).toContain('Removable, with a warning');
    expect(t).toContain(WARNING);
    expect(t).not.toMatch(/Safe to remove|loses nothing/);
    // said once, in the verdict's own box
    expect(t.split(WARNING)).toHaveLength(2);
    expect(html).toMatch(/data-tone="caution">.*data-testid="removal-warning"/);
  });

  it('allowed, nothing set off: green and safe', () => {
    const html = markup(check());
    expect(html).toMatch(/class="callout callout-success" data-testid="removal-allowed" data-tone="safe"/);
    expect(text(html)).toContain('Safe to remove Every image it brings is in containerd, complete and durably pinned: removing the file loses nothing.');
    expect(html).not.toContain('removal-warning');
  });

  it('refused: the problems and the way on', () => {
    const t = text(markup(check({ allowed: false, problems: ['docker.io/library/app:1 is not durably pinned.'], warnings: [WARNING] })));
    expect(t).toContain('Removing this archive now would lose pins');
    expect(t).toContain('Make its pins durable first');
    expect(t).not.toMatch(/Safe to remove|Removable/);
  });
});

describe('the Archives tab and the CLI: the same verdict', () => {
  const archive: ArchiveInfo = {
    path: 'runtime.tar',
    kind: 'archive',
    compression: 'none',
    size: 1,
    mtime: '2026-12-05T00:00:00.000Z',
    images: [image.name],
    imported: true,
    safeToRemove: true,
    reason: 'Every image it brings is complete and durably protected.',
    cachedByK3s: false,
  };
  it("the row's badge says what the dialog says", () => {
    const warned = renderToStaticMarkup(createElement(RemovalCell, { a: archive, warning: WARNING }));
    expect(warned).toContain('class="yn yn-warn"');
    expect(text(warned)).toBe(`Removable, with a warning ${WARNING}`);
    // The listing carries the warning the removal check gives (shared/removalVerdict removalWarnings).
    const listed = renderToStaticMarkup(createElement(RemovalCell, { a: { ...archive, removalWarnings: [{ brief: 'b', reason: WARNING }] } }));
    expect(listed).toContain('data-tone="caution"');
    expect(text(listed)).toBe(`Removable, with a warning ${WARNING}`);
    const plain = renderToStaticMarkup(createElement(RemovalCell, { a: archive }));
    expect(plain).toContain('class="yn yn-yes"');
    expect(text(plain)).toBe(`Safe to remove ${archive.reason}`);
    expect(text(renderToStaticMarkup(createElement(RemovalCell, { a: { ...archive, safeToRemove: false } })))).toMatch(/^Not safe to remove/);
  });

  it("the CLI's clause", () => {
    expect(removalVerdict(check()).clause).toBe('can be removed safely');
    expect(removalVerdict(check({ warnings: [WARNING] })).clause).toBe('can be removed, but read the warning first');
    expect(removalVerdict(check({ allowed: false })).clause).toBe('cannot be removed safely');
  });
});
