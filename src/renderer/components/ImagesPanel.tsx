import { Fragment, memo, useCallback, useDeferredValue, useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactElement } from 'react';
import type { NodeDef } from '../../shared/domain/nodes';
import { useApp } from '../context';
import { atRiskGroups, countsOfRefs, criModeOf, filterGroups, groupsOfRefs, isUnverifiedGroup, sortGroups, type ImageGroup, type PinFilter, type SortDir, type SortKey } from '../model/images';
import { fateText, formatDate, formatDateTime } from '../model/text';
import { displayRef } from '../model/refs';
import { visibleControls } from '../../shared/visibleControls';
import { formatBytes, shortDigest } from '../../shared/format';
import { imagesOf, statusOf } from '../store';
import { FateBadge } from './FateBadge';
import { AlertIcon, ChevronIcon, HashIcon, RefreshIcon, ShieldIcon, TagIcon, UnlockIcon } from './icons';
import { PinBadge } from './PinBadge';
import { RefText } from './RefText';
import type { PinRequest } from './PinDialog';
import { useVirtualRows } from './virtual';
import { SearchField } from './SearchField';
import { SegButton } from './SegButton';
import { compareText } from '../../shared/compareText';
import { NeedBadge, NeedDetails, NeedsBanner } from './SiteNeeds';
import { nodeAtRisk } from '../needsView';
import { peersColumnApplies, type EmbeddedRegistryConfig, type PeerServing } from '../../shared/embeddedRegistry';
import { EmbeddedRegistrySummary, NodeRegistriesDetails, PeersCell } from './Peers';
import { distroDisplayName } from '../../shared/distro';
import { signatureBrief, signatureSentence } from '../../shared/signatures';

/**
 * The Images tab's words that name the node's distro (`who`: "k3s", "RKE2", shared/distro
 * distroDisplayName). The pin state keeps its data name, k3s; only its label says whose pin it is.
 */
export const imagesPanelText = (who: string) => ({
  filters: [
    { value: 'all', label: 'All' },
    { value: 'durable', label: 'Durable' },
    { value: 'distro', label: who },
    { value: 'none', label: 'Unpinned' },
    { value: 'atRisk', label: 'At risk' },
  ] as { value: PinFilter; label: string }[],
  atRisk: (n: number) => `${n} ${n === 1 ? 'image will lose its pin' : 'images will lose their pin'} when ${who} restarts`,
  makeAllDurable: `Make all ${who} pins durable`,
  makeAllDurableSubject: `every image pinned by ${who}`,
  fateColumn: `At next ${who} start`,
  refFateColumn: `After next ${who} start`,
  peersTitle: `Whether other nodes can pull the image from this one through ${who}'s embedded registry`,
});

/** The node's distro as its texts name it; k3s until Holdfast has read it (shared/distro). */
const useDistroName = (node: string): string => useApp((s) => distroDisplayName(statusOf(s, node).info?.distro ?? 'unknown'));

/** Columns without Peers (shown while the node's embedded registry applies: peersColumnApplies). */
const COLS = 11;

/** The row action for an image group: make its non-durable references durable, or release. */
function rowRequest(g: ImageGroup): PinRequest {
  const short = displayRef(g.primaryName);
  if (g.pin === 'durable' && !g.mixedPins) {
    return {
      action: 'unpin',
      target: { refs: g.refs.filter((r) => r.pin === 'durable').map((r) => r.name) },
      title: `Release the durable pin of ${short}`,
      subject: `image ${short}`,
    };
  }
  return {
    action: 'pin',
    target: { refs: g.refs.filter((r) => r.pin !== 'durable').map((r) => r.name) },
    title: `Make ${short} durable`,
    subject: `image ${short}`,
  };
}

/** Why peers can or cannot pull the image from this node (the Peers column's long form). */
function PeersDetails({ peers }: { peers: PeerServing | null }) {
  if (!peers) return null;
  return (
    <div className={`details-peers ${peers.servable ? 'details-peers-yes' : 'details-peers-no'}`} data-testid="peers-reason">
      <strong>Peers: {peers.brief}.</strong> {peers.reason}
    </div>
  );
}

function Details({ g, node, peersOn, who }: { g: ImageGroup; node: NodeDef; peersOn: boolean; who: string }) {
  return (
    <div className="details" data-testid="image-details">
      <NeedDetails need={g.need} />
      {peersOn ? <PeersDetails peers={g.peers} /> : null}
      <div className={`details-fate details-fate-${g.fate}`}>
        <FateBadge fate={g.fate} reason={g.reason} who={who} />
        <p data-testid="fate-reason">{g.reason || fateText(who)[g.fate].description}</p>
      </div>
      <dl className="kv">
        <dt>Archive</dt>
        <dd data-testid="image-archive">
          {g.archive ? (
            <>
              <code>{g.archive}</code> <span className="muted">in {node.imagesDir}</span>
            </>
          ) : (
            <span className="muted">No archive in {node.imagesDir} brings this image.</span>
          )}
        </dd>
        <dt>Signature</dt>
        <dd data-testid="image-signature">{signatureSentence(g.signature)}</dd>
        <dt>Image ID</dt>
        <dd>
          <code className="hash">{g.imageId ?? '—'}</code>
        </dd>
        {g.digests.map((d, i) => (
          <Fragment key={d}>
            <dt>{i === 0 ? (g.digests.length > 1 ? 'Digests' : 'Digest') : ''}</dt>
            <dd>
              <code className="hash">{d}</code>
            </dd>
          </Fragment>
        ))}
      </dl>
      <table className="mini-table">
        <caption className="visually-hidden">References of this image</caption>
        <thead>
          <tr>
            <th scope="col">Reference</th>
            <th scope="col">Pin now</th>
            <th scope="col">{imagesPanelText(who).refFateColumn}</th>
          </tr>
        </thead>
        <tbody>
          {g.refs.map((r) => (
            <tr key={r.name}>
              <td>
                <code title={visibleControls(r.name)}>{displayRef(r.name)}</code>
              </td>
              <td>
                <PinBadge pin={r.shownPin} who={who} />
                {r.inherited ? (
                  <span className="muted pin-inherited" data-testid="pin-inherited" title="CRI's own sha256:<id> record has no labels of its own: it shows its image's pin and shares its fate.">
                    {' '}
                    (its image's)
                  </span>
                ) : null}
              </td>
              <td>
                <FateBadge fate={r.fate} reason={r.reason} who={who} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {Object.keys(g.labels).length ? (
        <div className="labels">
          {Object.entries(g.labels)
            .sort(([a], [b]) => compareText(a, b))
            .map(([k, v]) => (
              <code key={k} className="label-chip">
                {k}={v}
              </code>
            ))}
        </div>
      ) : null}
    </div>
  );
}

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

function timeAgo(ms: number | undefined): string {
  if (!ms) return '';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 10) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m} min ago` : new Date(ms).toLocaleTimeString();
}

export function ImagesPanel({ node, onPin }: { node: NodeDef; onPin(request: PinRequest): void }) {
  const images = useApp((s) => imagesOf(s, node.name));
  const loadImages = useApp((s) => s.loadImages);
  const [query, setQuery] = useState('');
  const [pin, setPin] = useState<PinFilter>('all');
  const [unverifiedOnly, setUnverifiedOnly] = useState(false);
  const [sort, setSort] = useState<{ key: SortKey; dir: SortDir }>({ key: 'name', dir: 'asc' });
  const deferredQuery = useDeferredValue(query);

  // What kubelet sees depends on the node's containerd (shared/protection).
  const mode = useApp((s) => criModeOf(statusOf(s, node.name).info));
  const who = useDistroName(node.name);
  const text = imagesPanelText(who);
  const groups = useMemo(() => groupsOfRefs(images.items, mode, who), [images.items, mode, who]);
  const counts = useMemo(() => countsOfRefs(images.items, mode, who), [images.items, mode, who]);
  const atRisk = useMemo(() => atRiskGroups(groups), [groups]);
  const unverified = useMemo(() => groups.filter(isUnverifiedGroup).length, [groups]);
  // With the needed images at risk listed above it, the pins banner says only what it adds.
  const neededShown = Boolean(images.needs && nodeAtRisk(images)?.length);
  const makeAtRiskDurable = () =>
    onPin({
      action: 'pin',
      target: { refs: atRisk.flatMap((g) => g.refs.filter((r) => r.pin === 'distro').map((r) => r.name)) },
      title: `Make ${atRisk.length} at-risk ${atRisk.length === 1 ? 'image' : 'images'} durable`,
      subject: `the ${atRisk.length === 1 ? 'image' : `${atRisk.length} images`} that would lose ${atRisk.length === 1 ? 'its' : 'their'} pin`,
    });
  const makeAllDurable = () =>
    onPin({ action: 'pin', target: { allK3s: true }, title: text.makeAllDurable, subject: text.makeAllDurableSubject });
  const visible = useMemo(
    () => sortGroups(filterGroups(groups, deferredQuery, pin, unverifiedOnly), sort.key, sort.dir),
    [groups, deferredQuery, pin, unverifiedOnly, sort],
  );
  const onSort = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: key === 'name' ? 'asc' : 'desc' }));
  const clear = () => {
    setQuery('');
    setPin('all');
    setUnverifiedOnly(false);
  };

  // The node's registries.yaml as the last fleet inspection read it (the report, else this run's answer).
  // Two stable selections, so a running inspection re-renders this panel only when this node answers.
  const report = useApp((s) => s.fleetRun.report);
  const answered = useApp((s) => s.fleetRun.results[node.name]);
  const registries = useMemo(() => {
    const r = (report?.nodes.find((n) => n.node === node.name) ?? answered)?.registries;
    return r ? { r, at: report ? formatDateTime(report.generatedAt) : null } : null;
  }, [report, answered, node.name]);
  const firstLoad = images.state === 'loading' && !images.loadedAt;
  const refreshing = images.state === 'loading';

  return (
    <section className={images.loadedAt && visible.length > 0 ? 'images images-fill' : 'images'} aria-labelledby="images-title">
      <div className="images-head">
        <h2 id="images-title" className="visually-hidden">Images</h2>
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

      <NeedsBanner node={node} images={images} onPin={onPin} who={who} />
      {images.loadedAt && images.embeddedRegistry ? <EmbeddedRegistrySummary cfg={images.embeddedRegistry} /> : null}
      {registries ? <NodeRegistriesDetails r={registries.r} at={registries.at} /> : null}

      {images.loadedAt && atRisk.length ? (
        <div className="banner banner-danger" role="region" aria-label="Pins at risk" data-testid="at-risk-banner">
          <AlertIcon className="banner-icon" />
          <div className="banner-text">
            <strong>{text.atRisk(atRisk.length)}</strong>
            {neededShown ? null : (
              <span>
                kubelet may then delete {atRisk.length === 1 ? 'it' : 'them'}, and at an air-gapped site a pod that needs{' '}
                {atRisk.length === 1 ? 'it' : 'one'} could not start again.
              </span>
            )}
          </div>
          <div className="banner-actions">
            {pin !== 'atRisk' ? (
              <button type="button" className="btn btn-small" onClick={() => setPin('atRisk')}>
                Show them
              </button>
            ) : null}
            <button type="button" className="btn btn-small btn-danger" onClick={makeAtRiskDurable} data-testid="banner-make-durable">
              <ShieldIcon /> Make them durable
            </button>
          </div>
        </div>
      ) : null}

      {images.loadedAt ? (
        <div className="toolbar">
          <SearchField id="image-search" label="Search images" placeholder="Search name, digest, image id or label" value={query} onChange={setQuery} testId="image-search" />
          <div className="segmented" role="group" aria-label="Filter by pin state">
            {text.filters.map((f) => (
              <SegButton key={f.value} active={pin === f.value} onClick={() => setPin(f.value)} testId={`filter-${f.value}`}>
                {f.value === 'atRisk' ? (
                  <AlertIcon className="seg-alert" />
                ) : f.value !== 'all' ? (
                  <span className={`seg-dot pin-dot-${f.value}`} aria-hidden="true" />
                ) : null}
                {f.label}
                <span className={f.value === 'atRisk' && counts.atRisk ? 'seg-count seg-count-alert' : 'seg-count'}>
                  {counts[f.value]}
                </span>
              </SegButton>
            ))}
          </div>
          <div className="segmented" role="group" aria-label="Filter by signature">
            <SegButton active={unverifiedOnly} onClick={() => setUnverifiedOnly((on) => !on)} testId="filter-unverified">
              Not verified
              <span className="seg-count">{unverified}</span>
            </SegButton>
          </div>
          <div className="spacer" />
          {counts.distro ? (
            <button type="button" className="btn" onClick={makeAllDurable} data-testid="make-all-durable">
              <ShieldIcon /> {text.makeAllDurable}
            </button>
          ) : null}
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
          <p className="empty-title">No images match{query ? ` “${query}”` : ''}{pin !== 'all' ? ` in ${text.filters.find((f) => f.value === pin)?.label}` : ''}</p>
          <p className="muted">Try a shorter search, or search by digest, image id or label.</p>
          <button type="button" className="btn btn-small" onClick={clear}>
            Clear search and filter
          </button>
        </div>
      ) : images.loadedAt ? (
        <ImagesTable node={node} visible={visible} sort={sort} onSort={onSort} onPin={onPin} registry={images.embeddedRegistry} who={who} />
      ) : null}
    </section>
  );
}

/** Height of one image row in px (kept in step with `.image-row` in styles.css). */
export const ROW_HEIGHT = 56;
/** References shown in a row; the rest are in the row's details. */
const REFS_IN_ROW = 2;
const DETAILS_ESTIMATE = 320;

/** One image row; memoised so scrolling only renders the rows that come into view. */
const ImageRow = memo(function ImageRow(props: {
  g: ImageGroup;
  i: number;
  open: boolean;
  focused: boolean;
  peersOn: boolean;
  /** The node's distro as its texts name it (the pin badge's label). */
  who: string;
  onToggle(key: string): void;
  onFocusKey(key: string): void;
  onPin(request: PinRequest): void;
}) {
  const { g, i, open } = props;
  const detailsId = `details-${g.key.replace(/[^A-Za-z0-9]/g, '')}`;
  const req = rowRequest(g);
  const shownRefs = g.refs.slice(0, REFS_IN_ROW);
  const more = g.refs.length - shownRefs.length;
  return (
    <tr
      data-testid="image-row"
      data-index={i}
      data-image-id={g.imageId ?? ''}
      data-fate={g.fate}
      aria-rowindex={i + 2}
      tabIndex={props.focused ? 0 : -1}
      onFocus={(e) => {
        if (e.target === e.currentTarget) props.onFocusKey(g.key);
      }}
      data-need={g.need?.verdict}
      className={`image-row${open ? ' row-open' : ''}${g.fate === 'lose' || g.need?.atRisk ? ' row-at-risk' : ''}`}
    >
      <td className="col-expand">
        <button
          type="button"
          className="expand"
          tabIndex={-1}
          aria-expanded={open}
          aria-controls={open ? detailsId : undefined}
          onClick={() => props.onToggle(g.key)}
          title={open ? 'Hide details' : 'Show details'}
          aria-label={`Details of ${g.primaryName}`}
          data-testid="expand-row"
        >
          <ChevronIcon />
        </button>
      </td>
      <td className="col-refs">
        <ul className="refs">
          {shownRefs.map((r, k) => (
            <li
              key={r.name}
              className={`ref ref-${r.kind}`}
              title={visibleControls(g.mixedPins ? `${r.name} — ${r.pin === 'none' ? 'unpinned' : `${r.pin} pin`}` : r.name)}
              data-testid="image-ref"
            >
              {r.kind === 'tag' ? <TagIcon label="tag" /> : <HashIcon label={r.kind === 'digest' ? 'digest reference' : "CRI's image id record"} />}
              <RefText name={r.name} />
              {k === shownRefs.length - 1 && more > 0 ? (
                <span className="more" title={g.refs.slice(REFS_IN_ROW).map((x) => visibleControls(x.name)).join('\n')}>
                  +{more}
                  <span className="visually-hidden"> more references, in the details</span>
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      </td>
      <td className="col-need">{g.need ? <NeedBadge verdict={g.need.verdict} because={g.need.because} /> : <span className="muted">—</span>}</td>
      <td className="col-pin">
        <PinBadge pin={g.pin} mixed={g.mixedPins} who={props.who} />
      </td>
      <td className="col-fate">
        <FateBadge fate={g.fate} reason={g.reason} who={props.who} />
      </td>
      <td className={`col-sig sig-cell${g.signature?.verified === false ? ' sig-unverified' : ''}`} title={signatureSentence(g.signature)} data-testid="signature-cell">
        {signatureBrief(g.signature)}
      </td>
      <td className="col-id">
        <code title={g.imageId ?? 'No config for this node’s platform'}>{shortDigest(g.imageId)}</code>
      </td>
      <td className="col-size num">{formatBytes(g.size)}</td>
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
      {props.peersOn ? (
        <td className="col-peers">
          <PeersCell peers={g.peers} />
        </td>
      ) : null}
      <td className="col-created">
        <time dateTime={g.createdAt ?? undefined} title={g.createdAt ?? undefined}>
          {formatDate(g.createdAt)}
        </time>
      </td>
      <td className="col-actions">
        <button
          type="button"
          className={req.action === 'pin' ? 'btn btn-small' : 'btn btn-small btn-quiet'}
          onClick={() => props.onPin(req)}
          aria-label={`${req.action === 'pin' ? 'Make durable' : 'Release durable pin'}: ${g.primaryName}`}
          title={req.title}
          data-testid="row-action"
        >
          {req.action === 'pin' ? <ShieldIcon /> : <UnlockIcon />}
          {req.action === 'pin' ? 'Make durable' : 'Release'}
        </button>
      </td>
    </tr>
  );
});

/**
 * The images table, windowed: with 10,000 references only the rows near the viewport are in
 * the DOM. Rows have a fixed height; an expanded row's details are measured. Up/Down, Home,
 * End, PageUp/PageDown move between rows (scrolling as needed); Enter or Space opens details.
 */
function ImagesTable(props: {
  node: NodeDef;
  visible: ImageGroup[];
  sort: { key: SortKey; dir: SortDir };
  onSort(key: SortKey): void;
  onPin(request: PinRequest): void;
  /** The node's embedded registry: the Peers column shows while it applies (peersColumnApplies). */
  registry?: EmbeddedRegistryConfig | null;
  /** The node's distro as its texts name it ("k3s", "RKE2": shared/distro distroDisplayName). */
  who: string;
}) {
  const { node, visible, onPin, who } = props;
  const text = imagesPanelText(who);
  const peersOn = peersColumnApplies(props.registry);
  const cols = COLS + (peersOn ? 1 : 0);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [detailHeights, setDetailHeights] = useState<ReadonlyMap<string, number>>(new Map());
  const [focusKey, setFocusKey] = useState<string | null>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const headRef = useRef<HTMLTableSectionElement>(null);
  const toggle = useCallback(
    (key: string) =>
      setExpanded((prev) => {
        const n = new Set(prev);
        if (n.has(key)) n.delete(key);
        else n.add(key);
        return n;
      }),
    [],
  );
  const onFocusKey = useCallback((key: string) => setFocusKey((k) => (k === key ? k : key)), []);
  const pinRef = useRef(onPin);
  pinRef.current = onPin;
  const onPinStable = useCallback((r: PinRequest) => pinRef.current(r), []);

  const extraOf = (i: number) => {
    const k = visible[i]!.key;
    return expanded.has(k) ? (detailHeights.get(k) ?? DETAILS_ESTIMATE) : 0;
  };
  // One identity while the rows and their heights stay the same: a fresh array each render would
  // recompute the 5,000 row offsets on every scroll event (the long tasks while wheeling).
  const extraKey = useMemo(() => [visible, expanded, detailHeights], [visible, expanded, detailHeights]);
  const v = useVirtualRows({
    count: visible.length,
    rowHeight: ROW_HEIGHT,
    extraOf,
    extraKey,
    scrollRef,
    headerRef: headRef,
  });

  const focusIndex = useMemo(() => Math.max(0, focusKey ? visible.findIndex((g) => g.key === focusKey) : 0), [visible, focusKey]);
  const pendingFocus = useRef(false);
  useEffect(() => {
    if (!pendingFocus.current) return;
    pendingFocus.current = false;
    scrollRef.current?.querySelector<HTMLElement>(`tr[data-index="${focusIndex}"]`)?.focus();
  });

  const onKeyDown = (e: KeyboardEvent<HTMLTableSectionElement>) => {
    if ((e.target as HTMLElement).tagName !== 'TR') return;
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 600) / ROW_HEIGHT) - 1);
    const last = visible.length - 1;
    let j = focusIndex;
    if (e.key === 'ArrowDown') j++;
    else if (e.key === 'ArrowUp') j--;
    else if (e.key === 'PageDown') j += page;
    else if (e.key === 'PageUp') j -= page;
    else if (e.key === 'Home') j = 0;
    else if (e.key === 'End') j = last;
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      const g = visible[focusIndex];
      if (g) toggle(g.key);
      return;
    } else return;
    e.preventDefault();
    j = Math.max(0, Math.min(last, j));
    setFocusKey(visible[j]!.key);
    v.scrollToIndex(j);
    pendingFocus.current = true;
  };

  const measure = (key: string) => (el: HTMLTableRowElement | null) => {
    if (!el) return;
    const h = el.getBoundingClientRect().height;
    if (h > 0 && Math.abs((detailHeights.get(key) ?? 0) - h) > 1) {
      setDetailHeights((prev) => new Map(prev).set(key, h));
    }
  };

  const rows: ReactElement[] = [];
  for (let i = v.start; i < v.end; i++) {
    const g = visible[i]!;
    const open = expanded.has(g.key);
    rows.push(
      <ImageRow
        key={g.key}
        g={g}
        i={i}
        open={open}
        focused={i === focusIndex}
        peersOn={peersOn}
        who={who}
        onToggle={toggle}
        onFocusKey={onFocusKey}
        onPin={onPinStable}
      />,
    );
    if (open) {
      rows.push(
        <tr className="details-row" id={`details-${g.key.replace(/[^A-Za-z0-9]/g, '')}`} key={`${g.key}/details`} ref={measure(g.key)}>
          <td colSpan={cols}>
            <Details g={g} node={node} peersOn={peersOn} who={who} />
          </td>
        </tr>,
      );
    }
  }

  return (
    <div className="table-wrap images-scroll" ref={scrollRef} data-testid="images-scroll">
      <table className="image-table" data-testid="images-table" aria-rowcount={visible.length + 1}>
        <caption className="visually-hidden">
          Images on {node.name}, {visible.length} shown. Up and Down move between rows; Enter shows a row’s details.
        </caption>
        <thead ref={headRef}>
          <tr aria-rowindex={1}>
            <th scope="col" className="col-expand">
              <span className="visually-hidden">Details</span>
            </th>
            <SortHeader label="References" sortKey="name" current={props.sort} onSort={props.onSort} className="col-refs" />
            <th scope="col" className="col-need" title="What the site's workloads need, and whether it is kept">
              Site need
            </th>
            <th scope="col" className="col-pin">
              Pin
            </th>
            <th scope="col" className="col-fate">
              {text.fateColumn}
            </th>
            <th scope="col" className="col-sig" title="What Holdfast verified of the image's signature at import">
              Signature
            </th>
            <th scope="col" className="col-id">
              Image ID
            </th>
            <SortHeader label="Size" sortKey="size" current={props.sort} onSort={props.onSort} className="col-size num" />
            <th scope="col" className="col-platforms">
              Platforms
            </th>
            {peersOn ? (
              <th scope="col" className="col-peers" title={text.peersTitle}>
                Peers
              </th>
            ) : null}
            <SortHeader label="Created" sortKey="created" current={props.sort} onSort={props.onSort} className="col-created" />
            <th scope="col" className="col-actions">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody onKeyDown={onKeyDown}>
          {v.padTop > 0 ? (
            <tr className="virtual-pad" aria-hidden="true" style={{ height: v.padTop }}>
              <td colSpan={cols} />
            </tr>
          ) : null}
          {rows}
          {v.padBottom > 0 ? (
            <tr className="virtual-pad" aria-hidden="true" style={{ height: v.padBottom }}>
              <td colSpan={cols} />
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
