import { Fragment, useDeferredValue, useMemo, useState } from 'react';
import type { NodeDef } from '../../shared/domain';
import { useApp } from '../context';
import {
  countByPin,
  displayRef,
  filterGroups,
  formatDate,
  groupImages,
  humanSize,
  shortId,
  sortGroups,
  type PinFilter,
  type SortDir,
  type SortKey,
} from '../model';
import { imagesOf } from '../store';
import { HashIcon, RefreshIcon, SearchIcon, TagIcon } from './icons';
import { PinBadge } from './PinBadge';

const FILTERS: { value: PinFilter; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'durable', label: 'Durable' },
  { value: 'k3s', label: 'k3s' },
  { value: 'none', label: 'Unpinned' },
];

function SortHeader(props: {
  label: string;
  sortKey: SortKey;
  current: { key: SortKey; dir: SortDir };
  onSort(key: SortKey): void;
  className?: string;
}) {
  const active = props.current.key === props.sortKey;
  const ariaSort = active ? (props.current.dir === 'asc' ? 'ascending' : 'descending') : 'none';
  return (
    <th scope="col" aria-sort={ariaSort} className={props.className}>
      <button type="button" className="sort" onClick={() => props.onSort(props.sortKey)}>
        {props.label}
        <span className={`sort-arrow${active ? ' active' : ''}`} aria-hidden="true">
          {active ? (props.current.dir === 'asc' ? '▲' : '▼') : '↕'}
        </span>
      </button>
    </th>
  );
}

/** Allow line breaks after "/" and before ":" or "@" so long references wrap at sensible places. */
function breakable(ref: string) {
  const parts = ref.split(/(?<=\/)|(?=@)|(?<!sha256)(?=:)/);
  return parts.map((part, i) => (
    <Fragment key={i}>
      {i > 0 ? <wbr /> : null}
      {part}
    </Fragment>
  ));
}

function timeAgo(ms: number | undefined): string {
  if (!ms) return '';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 10) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m} min ago` : new Date(ms).toLocaleTimeString();
}

export function ImagesPanel({ node }: { node: NodeDef }) {
  const images = useApp((s) => imagesOf(s, node.name));
  const loadImages = useApp((s) => s.loadImages);
  const [query, setQuery] = useState('');
  const [pin, setPin] = useState<PinFilter>('all');
  const [sort, setSort] = useState<{ key: SortKey; dir: SortDir }>({ key: 'name', dir: 'asc' });
  const deferredQuery = useDeferredValue(query);

  const groups = useMemo(() => groupImages(images.items), [images.items]);
  const counts = useMemo(() => countByPin(groups), [groups]);
  const visible = useMemo(
    () => sortGroups(filterGroups(groups, deferredQuery, pin), sort.key, sort.dir),
    [groups, deferredQuery, pin, sort],
  );
  const onSort = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: key === 'name' ? 'asc' : 'desc' }));
  const clear = () => {
    setQuery('');
    setPin('all');
  };

  const firstLoad = images.state === 'loading' && !images.loadedAt;
  const refreshing = images.state === 'loading';

  return (
    <section className="images" aria-labelledby="images-title">
      <div className="images-head">
        <h2 id="images-title">Images</h2>
        {images.loadedAt ? (
          <span className="muted small" data-testid="images-summary">
            {groups.length} {groups.length === 1 ? 'image' : 'images'} · {images.items.length}{' '}
            {images.items.length === 1 ? 'reference' : 'references'} · namespace <code>{node.namespace}</code>
          </span>
        ) : null}
        <div className="spacer" />
        {images.loadedAt ? <span className="muted small">Updated {timeAgo(images.loadedAt)}</span> : null}
        <button
          type="button"
          className="btn"
          onClick={() => void loadImages(node.name)}
          disabled={refreshing}
          data-testid="refresh-images"
        >
          <RefreshIcon className={refreshing ? 'spin' : undefined} />
          {refreshing ? (images.loadedAt ? 'Refreshing…' : 'Loading…') : 'Refresh'}
        </button>
      </div>

      {images.loadedAt ? (
        <div className="toolbar">
          <div className="search">
            <label htmlFor="image-search" className="visually-hidden">
              Search images
            </label>
            <SearchIcon className="search-icon" />
            <input
              id="image-search"
              type="search"
              placeholder="Search name, digest, image id or label"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              data-testid="image-search"
              autoComplete="off"
              spellCheck={false}
            />
          </div>
          <div className="segmented" role="group" aria-label="Filter by pin state">
            {FILTERS.map((f) => (
              <button
                key={f.value}
                type="button"
                aria-pressed={pin === f.value}
                className={pin === f.value ? 'seg active' : 'seg'}
                onClick={() => setPin(f.value)}
                data-testid={`filter-${f.value}`}
              >
                {f.value !== 'all' ? <span className={`seg-dot pin-dot-${f.value}`} aria-hidden="true" /> : null}
                {f.label}
                <span className="seg-count">{counts[f.value]}</span>
              </button>
            ))}
          </div>
        </div>
      ) : null}

      {images.state === 'error' ? (
        <div className="callout callout-error" role="alert" data-testid="images-error">
          <strong>Could not list images: {images.error?.message}</strong>
          {images.error?.hint ? <p>{images.error.hint}</p> : <p>Check the node's containerd socket and namespace, then retry.</p>}
          <button type="button" className="btn btn-small" onClick={() => void loadImages(node.name)}>
            Retry
          </button>
        </div>
      ) : null}

      {firstLoad ? (
        <div className="empty" data-testid="images-loading" aria-live="polite">
          <span className="spinner" aria-hidden="true" />
          <p>Listing images on {node.name}…</p>
        </div>
      ) : images.loadedAt && groups.length === 0 ? (
        <div className="empty" data-testid="images-empty">
          <p className="empty-title">No images in namespace {node.namespace}</p>
          <p className="muted">
            If this node runs workloads, check the namespace and containerd socket in the node settings (Edit). To add
            images, place archives in <code>{node.imagesDir}</code> or import them.
          </p>
        </div>
      ) : images.loadedAt && visible.length === 0 ? (
        <div className="empty" data-testid="images-no-match">
          <p className="empty-title">No images match{query ? ` “${query}”` : ''}{pin !== 'all' ? ` in ${FILTERS.find((f) => f.value === pin)?.label}` : ''}</p>
          <p className="muted">Try a shorter search, or search by digest, image id or label.</p>
          <button type="button" className="btn btn-small" onClick={clear}>
            Clear search and filter
          </button>
        </div>
      ) : images.loadedAt ? (
        <div className="table-wrap">
          <table className="image-table" data-testid="images-table">
            <caption className="visually-hidden">
              Images on {node.name}, {visible.length} shown
            </caption>
            <thead>
              <tr>
                <SortHeader label="References" sortKey="name" current={sort} onSort={onSort} className="col-refs" />
                <th scope="col" className="col-pin">
                  Pin
                </th>
                <th scope="col" className="col-id">
                  Image ID
                </th>
                <SortHeader label="Size" sortKey="size" current={sort} onSort={onSort} className="col-size num" />
                <th scope="col" className="col-platforms">
                  Platforms
                </th>
                <SortHeader label="Created" sortKey="created" current={sort} onSort={onSort} className="col-created" />
              </tr>
            </thead>
            <tbody>
              {visible.map((g) => (
                <tr key={g.key} data-testid="image-row" data-image-id={g.imageId ?? ''}>
                  <td className="col-refs">
                    <ul className="refs">
                      {g.refs.map((r) => (
                        <li
                          key={r.name}
                          className={`ref ref-${r.kind}`}
                          title={g.mixedPins ? `${r.name} — ${r.pin === 'none' ? 'unpinned' : `${r.pin} pin`}` : r.name}
                          data-testid="image-ref"
                        >
                          {r.kind === 'tag' ? <TagIcon /> : <HashIcon />}
                          <span className="ref-text">{breakable(displayRef(r.name))}</span>
                          <span className="visually-hidden">{r.kind === 'tag' ? ' (tag)' : ' (digest reference)'}</span>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td className="col-pin">
                    <PinBadge pin={g.pin} mixed={g.mixedPins} />
                  </td>
                  <td className="col-id">
                    <code title={g.imageId ?? 'No config for this node’s platform'}>{shortId(g.imageId)}</code>
                  </td>
                  <td className="col-size num">{humanSize(g.size)}</td>
                  <td className="col-platforms">
                    {g.platforms.length ? (
                      <span className="platforms" title={g.platforms.join('\n')}>
                        {g.platforms[0]}
                        {g.platforms.length > 1 ? (
                          <span className="more">
                            +{g.platforms.length - 1}
                            <span className="visually-hidden"> more: {g.platforms.slice(1).join(', ')}</span>
                          </span>
                        ) : null}
                      </span>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td className="col-created">
                    <time dateTime={g.createdAt ?? undefined} title={g.createdAt ?? undefined}>
                      {formatDate(g.createdAt)}
                    </time>
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
