import { useEffect, useMemo } from 'react';
import type { ArchiveInfo } from '../../shared/domain/archives';
import type { Distro, NodeDef } from '../../shared/domain/nodes';
import { useApp } from '../context';
import { compressionName, plural } from '../../shared/wording';
import { appText } from '../appText';
import { ARCHIVE_KIND_TEXT, sortArchives } from '../model/archives';
import { displayRef } from '../model/refs';
import { formatDateTime } from '../model/text';
import { formatBytes } from '../../shared/format';
import { distroDisplayName } from '../../shared/distro';
import { listTakeoverBrief, listTakeoverReason } from '../../shared/listTrap';
import { rke2ListsNotice } from '../../shared/rke2Lists';
import { removalVerdict } from '../../shared/removalVerdict';
import { archivesOf, statusOf } from '../store';
import { breakable } from './Breakable';
import { ErrorCallout } from './ErrorCallout';
import { ImportCacheBanner } from './ImportCacheBanner';
import { cacheVerdictReason } from '../../shared/importCacheHealth';
import { AlertIcon, CheckIcon, ClockIcon, CrossIcon, RefreshIcon, ShieldIcon, TrashIcon } from './icons';
import { visibleControls } from '../../shared/visibleControls';

const MAX_IMAGES = 3;

function ImagesCell({ images }: { images: string[] }) {
  if (images.length === 0) return <span className="muted">—</span>;
  const shown = images.slice(0, MAX_IMAGES);
  const rest = images.slice(MAX_IMAGES);
  return (
    <ul className="refs archive-images">
      {shown.map((i) => (
        <li key={i} className="ref" title={i}>
          <span className="ref-text">{breakable(displayRef(i))}</span>
        </li>
      ))}
      {rest.length ? (
        <li>
          <details className="more-images">
            <summary>+{rest.length} more</summary>
            <ul className="refs">
              {rest.map((i) => (
                <li key={i} className="ref" title={i}>
                  <span className="ref-text">{breakable(displayRef(i))}</span>
                </li>
              ))}
            </ul>
          </details>
        </li>
      ) : null}
    </ul>
  );
}

/**
 * Whether the file can go, in the tone of shared/removalVerdict: the warning is what removing it
 * sets off without blocking it (RKE2 writing its own lists: shared/rke2Lists), as the listing
 * carries it (`removalWarnings`, the removal check's own words) unless given.
 */
export function RemovalCell({ a, warning = a.removalWarnings?.[0]?.reason ?? null }: { a: ArchiveInfo; warning?: string | null }) {
  const verdict = removalVerdict({ allowed: a.safeToRemove, warnings: warning ? [warning] : [] });
  return (
    <div className="removal">
      <span
        className={verdict.tone === 'safe' ? 'yn yn-yes' : 'yn yn-warn'}
        data-testid="safe-to-remove"
        data-safe={a.safeToRemove}
        data-tone={verdict.tone}
      >
        {verdict.tone === 'safe' ? <CheckIcon /> : <AlertIcon />}
        {verdict.heading}
      </span>
      {/* With a warning standing, the warning is the reason ("loses nothing" would not be the whole story). */}
      {verdict.tone === 'caution' || a.reason ? (
        <span className="removal-reason" data-testid="removal-reason">
          {verdict.tone === 'caution' ? warning : appText(a.reason, 'use Make durable on this row')}
        </span>
      ) : null}
    </div>
  );
}

/** RKE2 writes its own image lists when no archive is at the top level of its images dir (shared/rke2Lists). */
export function Rke2ListsBanner({ node, distro, files }: { node: string; distro: Distro; files: readonly string[] }) {
  const notice = rke2ListsNotice(node, distro, files, 'on the Images tab');
  if (!notice) return null;
  return (
    <div className="banner banner-warning" data-testid="rke2-lists-banner">
      <AlertIcon className="banner-icon" />
      <div className="banner-text">
        <strong>{notice.brief.charAt(0).toUpperCase() + notice.brief.slice(1)}.</strong>
        <span data-testid="rke2-lists-reason">{notice.reason}</span>
      </div>
    </div>
  );
}

export function ArchivesPanel(props: { node: NodeDef; onMakeDurable(path: string): void; onRemove(path: string): void }) {
  const { node } = props;
  const archives = useApp((s) => archivesOf(s, node.name));
  // Who imports, as the node's distro is named (k3s until the node was probed).
  const distro = useApp((s) => statusOf(s, node.name).info?.distro) ?? 'unknown';
  const who = distroDisplayName(distro);
  const loadArchives = useApp((s) => s.loadArchives);
  const items = useMemo(() => sortArchives(archives.items), [archives.items]);
  const cached = items.filter((a) => a.cachedByK3s).length;
  const paths = useMemo(() => items.map((a) => a.path), [items]);
  // k3s's import cache health is the node's, carried by every file (shared/importCacheHealth).
  const cacheHealth = items[0]?.importCache;

  useEffect(() => {
    if (archives.state === 'idle') void loadArchives(node.name);
  }, [archives.state, loadArchives, node.name]);

  const refreshing = archives.state === 'loading';
  const bytes = items.reduce((n, a) => n + a.size, 0);

  return (
    <section className="images" aria-labelledby="archives-title">
      <div className="images-head">
        <h2 id="archives-title" className="visually-hidden">Archives</h2>
        {archives.loadedAt ? (
          <span className="muted small" data-testid="archives-summary">
            {plural(items.length, 'file')} · {formatBytes(bytes)} in <code>{node.imagesDir}</code>
          </span>
        ) : null}
        <div className="spacer" />
        <button type="button" className="btn" onClick={() => void loadArchives(node.name)} disabled={refreshing}>
          <RefreshIcon className={refreshing ? 'spin' : undefined} />
          {refreshing ? (archives.loadedAt ? 'Refreshing…' : 'Loading…') : 'Refresh'}
        </button>
      </div>

      <ImportCacheBanner node={node.name} cached={cached} health={cacheHealth} who={who} />

      {/* Once the listing is read, an empty images dir included. */}
      {archives.loadedAt ? <Rke2ListsBanner node={node.name} distro={distro} files={paths} /> : null}

      {archives.state === 'error' && archives.error ? (
        <ErrorCallout error={archives.error} title="Could not list archives" testId="archives-error">
          <button type="button" className="btn btn-small" onClick={() => void loadArchives(node.name)}>
            Retry
          </button>
        </ErrorCallout>
      ) : null}

      {!archives.loadedAt && archives.state !== 'error' ? (
        <div className="empty" aria-live="polite" data-testid="archives-loading">
          <span className="spinner" aria-hidden="true" />
          <p>Reading {node.imagesDir} on {node.name}…</p>
        </div>
      ) : archives.loadedAt && items.length === 0 ? (
        <div className="empty" data-testid="archives-empty">
          <p className="empty-title">No files in {node.imagesDir}</p>
          <p className="muted">
            {who} imports nothing at start on this node: every pin that remains is durable or was made by hand.
          </p>
        </div>
      ) : archives.loadedAt ? (
        <div className="table-wrap">
          <table className="image-table archive-table" data-testid="archives-table">
            <caption className="visually-hidden">Files in the images directory of {node.name}</caption>
            <thead>
              <tr>
                <th scope="col" className="col-path">
                  File
                </th>
                <th scope="col">Kind</th>
                <th scope="col">Size · modified</th>
                <th scope="col" className="col-archive-images">
                  Images · imported
                </th>
                <th scope="col" className="col-removal">
                  Removal
                </th>
                <th scope="col" className="col-actions">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={a.path} data-testid="archive-row" data-path={a.path} className={a.error ? 'row-error' : undefined}>
                  <td className="col-path">
                    <code className="path">{breakable(a.path)}</code>
                    {a.cachedByK3s ? (
                      <span className="tag tag-warning" data-testid="cached-badge" title={cacheVerdictReason(a.cache, who) ?? `Listed unchanged in .cache.json: ${who} will not re-import it at start.`}>
                        <ClockIcon /> cached by {who}
                      </span>
                    ) : null}
                    {cacheVerdictReason(a.cache, who) ? (
                      <p className="archive-note" data-testid="cache-verdict">
                        .cache.json: {cacheVerdictReason(a.cache, who)}
                      </p>
                    ) : null}
                    {a.takesOver?.length ? (
                      <p className="archive-error" data-testid="list-takeover" title={listTakeoverReason(a.path, a.takesOver, who)}>
                        <AlertIcon /> {listTakeoverBrief(a.takesOver)}
                      </p>
                    ) : null}
                    {a.error ? (
                      <p className="archive-error" data-testid="archive-error">
                        <AlertIcon /> Unreadable: {visibleControls(a.error)}
                      </p>
                    ) : null}
                  </td>
                  <td>
                    <span className={`kind kind-${a.kind}`} title={ARCHIVE_KIND_TEXT[a.kind].description} data-testid="archive-kind">
                      {ARCHIVE_KIND_TEXT[a.kind].label}
                    </span>
                    {a.compression ? (
                      <span className="sub" data-testid="archive-compression">
                        {compressionName(a.compression)}
                      </span>
                    ) : null}
                  </td>
                  <td className="nowrap">
                    <span className="num-text">{formatBytes(a.size)}</span>
                    <time className="sub" dateTime={a.mtime} title={a.mtime}>
                      {formatDateTime(a.mtime)}
                    </time>
                  </td>
                  <td className="col-archive-images">
                    <ImagesCell images={a.images} />
                    {a.kind === 'archive' && !a.error ? (
                      <span className={a.imported ? 'yn yn-yes sub' : 'yn yn-no sub'} data-testid="archive-imported" data-imported={a.imported}>
                        {a.imported ? <CheckIcon /> : <CrossIcon />}
                        {a.imported ? 'Imported' : 'Not imported'}
                      </span>
                    ) : null}
                  </td>
                  <td className="col-removal">
                    <RemovalCell a={a} />
                  </td>
                  <td className="col-actions">
                    <div className="row-actions">
                      {a.kind === 'archive' && a.images.length ? (
                        <button
                          type="button"
                          className="btn btn-small"
                          onClick={() => props.onMakeDurable(a.path)}
                          aria-label={`Make durable: the images of ${a.path}`}
                        >
                          <ShieldIcon /> Make durable
                        </button>
                      ) : null}
                      <button
                        type="button"
                        className="btn btn-small btn-danger-quiet"
                        onClick={() => props.onRemove(a.path)}
                        aria-label={`Remove safely: ${a.path}`}
                      >
                        <TrashIcon /> Remove…
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
