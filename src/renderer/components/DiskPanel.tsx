// A node's Disk tab: the image file system against kubelet's thresholds, the GC forecast (what
// kubelet would delete first when the disk fills, with the images the site needs flagged), the
// image store image by image, and the way to free space safely (Prune…).
import { useEffect } from 'react';
import type { NodeDef } from '../../shared/domain/nodes';
import { FS_ROLE_TEXT, pictureNearGc, pointsToHigh, type DiskPicture, type StoreSummary } from '../../shared/diskPicture';
import { plural } from '../../shared/wording';
import type { ForecastStep, GcForecast } from '../../shared/gcForecast';
import { evictionAtPercent, formatAge, formatThreshold, kubeletUsagePercent, maxAgeWhen, usedPercentExact } from '../../shared/gcPolicy';
import { formatPercent, formatBytes, shortDigest } from '../../shared/format';
import type { ImageState, StoreImage } from '../../shared/imageStore';
import { protectionChange, type ProtectionChange } from '../../shared/protection';
import { useApp } from '../context';
import { displayRef } from '../model/refs';
import { formatDateTime } from '../model/text';
import { diskOf, statusOf } from '../store';
import { distroDisplayName } from '../../shared/distro';
import { DiskChart } from './DiskChart';
import { ErrorCallout } from './ErrorCallout';
import { FateBadge } from './FateBadge';
import { AlertIcon, BoxIcon, ClockIcon, InfoIcon, RefreshIcon, ShieldIcon, SlashIcon, TrashIcon } from './icons';
import { imageName } from '../../shared/imageReference';

/** Each state's badge and its title; `who` names the node's distro ("k3s", "RKE2": shared/distro distroDisplayName). */
export const stateText = (who: string, maxAge: string | null = null): Record<ImageState, { label: string; title: string }> => ({
  'in-use': { label: 'In use', title: 'A container record names it: kubelet and prune leave it.' },
  durable: { label: 'Durable pin', title: `Pinned for kubelet with no ${who} label: kubelet never deletes it; ${who} never strips it.` },
  distro: { label: `${who} pin`, title: `Pinned by ${who}: kubelet leaves it until the next ${who} start strips the pin (unless an archive brings it back).` },
  unprotected: {
    label: 'Unprotected',
    title: maxAge ? `Neither used nor pinned: kubelet's max-age GC deletes it ${maxAge}, and its GC when the disk fills.` : "Neither used nor pinned: kubelet's GC deletes it when the disk fills.",
  },
});

const STATE_CLASS: Record<ImageState, string> = { 'in-use': 'pin-inuse', durable: 'pin-durable', distro: 'pin-distro', unprotected: 'pin-none' };

/**
 * What the next k3s start does to the image as kubelet sees it: shared/protection's verdict, the
 * one the Images tab shows (the core puts it on each store image).
 */
export const storeFate = (i: Pick<StoreImage, 'pinnedForKubelet' | 'pinnedAfterRestart'>): ProtectionChange =>
  protectionChange({ now: i.pinnedForKubelet, afterRestart: i.pinnedAfterRestart });

/** A pinned image the next k3s start leaves unprotected (not in use: a container keeps it anyway). */
const losesPinAtStart = (i: StoreImage) => i.state !== 'in-use' && i.state !== 'unprotected' && storeFate(i) === 'lose';

const losesPinTitle = (who: string) => `Pinned now, but no reference keeps its pin at the next ${who} start (nothing in the images dir pins it again): kubelet may then delete it.`;
const keptTitle = (who: string) => `Pinned by ${who}, and what is in the images dir pins it again at every ${who} start: kubelet keeps it.`;

export function StateBadge({ image, who = 'k3s', maxAge = null }: { image: StoreImage; who?: string; /** maxAgeWhen's clause, when max-age GC is on */ maxAge?: string | null }) {
  const state = image.state;
  const text = stateText(who, maxAge)[state];
  const Icon = state === 'in-use' ? BoxIcon : state === 'durable' ? ShieldIcon : state === 'distro' ? ClockIcon : SlashIcon;
  const loses = losesPinAtStart(image);
  return (
    <span className="pin-stack">
      <span
        className={`pin ${STATE_CLASS[state]}`}
        title={loses ? losesPinTitle(who) : state === 'distro' && storeFate(image) === 'kept' ? keptTitle(who) : text.title}
        data-testid="store-state"
        data-state={state}
        data-fate={storeFate(image)}
      >
        <Icon />
        {text.label}
      </span>
      {loses ? <FateBadge fate="lose" reason={losesPinTitle(who)} who={who} /> : null}
    </span>
  );
}

/**
 * The store in one line. "Pinned" counts only what kubelet keeps after the next k3s start (as the
 * Images tab judges it); a pin that start strips is counted apart, never as protection.
 */
export function storeSummaryText(sum: StoreSummary, images: StoreImage[], who = 'k3s'): string {
  const pinned = images.filter((i) => i.state === 'durable' || i.state === 'distro');
  const losing = pinned.filter(losesPinAtStart).length;
  const kept = pinned.filter((i) => storeFate(i) === 'kept').length;
  // Pinned by label but not for kubelet (a containerd without CRI pinning): neither.
  const ignored = pinned.length - losing - kept;
  return [
    `${plural(sum.images, 'image')}`,
    `${formatBytes(sum.storeBytes)} of content`,
    `${sum.inUse} in use`,
    `${kept} pinned`,
    ...(losing ? [`${losing} ${losing === 1 ? 'loses its pin' : 'lose their pin'} at the next ${who} start`] : []),
    ...(ignored ? [`${ignored} pinned but not for kubelet`] : []),
    `${sum.unprotected} unprotected (${formatBytes(sum.unprotectedBytes)})`,
  ].join(' · ');
}

function ForecastRow({ step, n }: { step: ForecastStep; n: number }) {
  const name = imageName(step.refs, step.key);
  return (
    <li className={`forecast-step${step.needed.length ? ' forecast-needed' : ''}${step.deleted ? '' : ' forecast-later'}`} data-testid="forecast-step" data-ref={name} data-deleted={step.deleted}>
      <span className="forecast-n" aria-hidden="true">
        {step.deleted ? n : '·'}
      </span>
      <div className="forecast-body">
        <div className="forecast-head">
          <code className="forecast-ref" title={step.refs.join('\n')}>
            {displayRef(name)}
          </code>
          <span className="muted small">
            CRI size {formatBytes(step.criSize)} · frees <strong>{formatBytes(step.frees)}</strong>
          </span>
          {step.needed.length ? (
            <span className="tag tag-danger" data-testid="needed-flag">
              <AlertIcon /> Needed
            </span>
          ) : null}
        </div>
        {step.needed.map((f) => (
          <p key={f.kind} className="forecast-why" data-testid="needed-why" data-kind={f.kind}>
            {f.text}
          </p>
        ))}
      </div>
    </li>
  );
}

export function Forecast({ f, images, who }: { f: GcForecast; images: StoreImage[] | null; who: string }) {
  // Pinned for kubelet now, but not after the next k3s start: kubelet spares them only until then.
  const losing = images?.filter(losesPinAtStart).length ?? 0;
  const deleted = f.steps.filter((s) => s.deleted);
  const later = f.steps.filter((s) => !s.deleted);
  const needed = deleted.filter((s) => s.needed.length);
  return (
    <section className="disk-section" aria-labelledby="forecast-title" data-testid="gc-forecast">
      <h3 id="forecast-title">
        If the disk reaches {formatPercent(f.highPercent)}{f.triggeredNow ? ' (it is there now)' : ''}: what kubelet deletes first
      </h3>
      {f.maxAge ? (
        <div className={`banner ${f.maxAge.needed ? 'banner-danger' : 'banner-warning'}`} data-testid="forecast-max-age">
          <ClockIcon className="banner-icon" />
          <div className="banner-text">
            <strong>{f.maxAge.text}</strong>
            {f.maxAge.needed ? (
              <span>
                {plural(f.maxAge.needed, 'needed image')} among them: pin {f.maxAge.needed === 1 ? 'it' : 'them'} durably now (Images tab) — the disk need not fill.
              </span>
            ) : null}
          </div>
        </div>
      ) : null}
      {needed.length ? (
        <div className="banner banner-danger" role="alert" data-testid="forecast-needed-banner">
          <AlertIcon className="banner-icon" />
          <div className="banner-text">
            <strong>
              kubelet would delete {needed.length} {needed.length === 1 ? 'image' : 'images'} this site needs:{' '}
              {needed.map((s) => displayRef(imageName(s.refs, s.key))).join(', ')}
            </strong>
            <span>
              Pin {needed.length === 1 ? 'it' : 'them'} durably before the disk fills (Make durable on the Images tab), or
              free space with Prune, which never takes them.
            </span>
          </div>
        </div>
      ) : null}
      {f.steps.length === 0 ? (
        <p className="muted" data-testid="forecast-empty">
          Nothing: every image is in use or pinned for kubelet
          {losing ? ` (${losing} of them only until the next ${who} start, which strips ${losing === 1 ? 'its pin' : 'their pins'})` : ''}.
        </p>
      ) : (
        <>
          {f.measured ? (
            <p className="forecast-summary" data-testid="forecast-summary">
              kubelet deletes <strong>{deleted.length}</strong> {deleted.length === 1 ? 'image' : 'images'}, counting {formatBytes(f.kubeletCounts)} of the{' '}
              {formatBytes(f.bytesToFree)} it wants to free; the disk really gets <strong>{formatBytes(f.realFreed)}</strong> back
              {f.usageAfterPercent !== null ? ` and ends at ${formatPercent(f.usageAfterPercent)}` : ''} (target {formatPercent(f.lowPercent)}).
            </p>
          ) : null}
          <ol className="forecast" data-testid="forecast-list">
            {deleted.map((s, i) => (
              <ForecastRow key={s.key} step={s} n={i + 1} />
            ))}
          </ol>
          {later.length ? (
            <details className="forecast-more" open={deleted.length === 0}>
              <summary>
                {later.length} more {later.length === 1 ? 'image' : 'images'} kubelet deletes only at hard eviction
                {f.eviction.atPercent !== null ? ` (${formatPercent(f.eviction.atPercent)} used)` : ''}
              </summary>
              <ol className="forecast">
                {later.map((s, i) => (
                  <ForecastRow key={s.key} step={s} n={deleted.length + i + 1} />
                ))}
              </ol>
            </details>
          ) : null}
        </>
      )}
      <p className="note" data-testid="forecast-order-note">
        <InfoIcon />
        <span>{f.orderNote}</span>
      </p>
      {f.notes.map((n) => (
        <p key={n} className="muted small">
          {n}
        </p>
      ))}
    </section>
  );
}

export function Thresholds({ p }: { p: Pick<DiskPicture, 'policy' | 'imagefs'> }) {
  const pol = p.policy;
  const ev = evictionAtPercent(pol.evictionHard.imagefs, p.imagefs?.totalBytes ?? null);
  return (
    <dl className="kv disk-kv" data-testid="gc-thresholds">
      <dt>GC starts at</dt>
      <dd>
        <strong data-testid="gc-high">{formatPercent(pol.highPercent)}</strong> used <span className="muted">— image-gc-high-threshold, {pol.sources.high}</span>
      </dd>
      <dt>GC frees down to</dt>
      <dd>
        <strong data-testid="gc-low">{formatPercent(pol.lowPercent)}</strong> <span className="muted">— image-gc-low-threshold, {pol.sources.low}</span>
      </dd>
      <dt>Hard eviction</dt>
      <dd>
        imagefs.available &lt; {formatThreshold(pol.evictionHard.imagefs)}
        {ev !== null ? ` (${formatPercent(ev)} used)` : ''}, nodefs.available &lt; {formatThreshold(pol.evictionHard.nodefs)}{' '}
        <span className="muted">— {pol.sources.evictionHard}; kubelet then evicts pods and deletes every unused image</span>
      </dd>
      <dt>Max-age GC</dt>
      <dd data-testid="gc-max-age">
        {pol.maxAge ? (
          <>
            <strong>{formatAge(pol.maxAge.seconds)}</strong> unused, whatever the disk usage{' '}
            <span className="muted">
              — image-maximum-gc-age={pol.maxAge.value}, {pol.maxAge.source}
            </span>
          </>
        ) : (
          <span className="muted">off (image-maximum-gc-age not set)</span>
        )}
      </dd>
    </dl>
  );
}

function StoreTable({ images, who, maxAge }: { images: StoreImage[]; who: string; maxAge: string | null }) {
  return (
    <div className="table-wrap">
      <table className="image-table store-table" data-testid="store-table">
        <caption className="visually-hidden">The node's images, one row per image (every reference with one image id)</caption>
        <thead>
          <tr>
            <th scope="col">Image</th>
            <th scope="col">State</th>
            <th scope="col" className="num">
              CRI size
            </th>
            <th scope="col" className="num" title="What deleting this image alone frees: blobs no other image holds">
              Frees alone
            </th>
            <th scope="col">Records last changed</th>
          </tr>
        </thead>
        <tbody>
          {images.map((i) => {
            const name = imageName(i.refs, i.key);
            return (
              <tr key={i.key} data-testid="store-row" data-ref={name} data-state={i.state}>
                <td>
                  <code className="ref" title={i.refs.join('\n')}>
                    {displayRef(name)}
                  </code>
                  <span className="sub muted">
                    image {shortDigest(i.imageId)} · {i.refs.length} {i.refs.length === 1 ? 'reference' : 'references'}
                    {i.usedBy.length ? ` · used by ${i.usedBy.map((u) => u.id.slice(0, 12)).join(', ')}` : ''}
                  </span>
                </td>
                <td>
                  <StateBadge image={i} who={who} maxAge={maxAge} />
                </td>
                <td className="num nowrap">{formatBytes(i.criSize)}</td>
                <td className="num nowrap">{formatBytes(i.exclusiveBytes)}</td>
                <td className="nowrap">{formatDateTime(i.lastChangedAt)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function DiskPanel({ node, onPrune }: { node: NodeDef; onPrune(): void }) {
  const disk = useApp((s) => diskOf(s, node.name));
  const loadDisk = useApp((s) => s.loadDisk);
  // The node's distro names who pins and strips (k3s until the node was probed).
  const who = distroDisplayName(useApp((s) => statusOf(s, node.name).info?.distro) ?? 'unknown');
  useEffect(() => {
    if (disk.state === 'idle' || (disk.state === 'ready' && !disk.full)) void loadDisk(node.name);
  }, [disk.state, disk.full, loadDisk, node.name]);
  const p = disk.full ? disk.picture : undefined;
  const refreshing = disk.state === 'loading';
  const points = p ? pointsToHigh(p) : null;
  return (
    <section className="images disk" aria-labelledby="disk-title">
      <div className="images-head">
        <h2 id="disk-title" className="visually-hidden">Disk</h2>
        {p?.summary ? (
          <span className="muted small disk-summary" data-testid="disk-summary">
            {storeSummaryText(p.summary, p.images ?? [], who)}
          </span>
        ) : null}
        <div className="spacer" />
        <button type="button" className="btn" onClick={() => void loadDisk(node.name)} disabled={refreshing}>
          <RefreshIcon className={refreshing ? 'spin' : undefined} />
          {refreshing ? (p ? 'Refreshing…' : 'Loading…') : 'Refresh'}
        </button>
        <button type="button" className="btn btn-danger-quiet" onClick={onPrune} disabled={!p} data-testid="open-prune">
          <TrashIcon /> Prune…
        </button>
      </div>
      {disk.state === 'error' && disk.error ? (
        <ErrorCallout error={disk.error} title="Could not read the disk picture" testId="disk-error">
          <button type="button" className="btn btn-small" onClick={() => void loadDisk(node.name)}>
            Retry
          </button>
        </ErrorCallout>
      ) : null}
      {!p && disk.state !== 'error' ? (
        <div className="empty" aria-live="polite" data-testid="disk-loading">
          <span className="spinner" aria-hidden="true" />
          <p>Measuring {node.name}'s file systems and walking its image store…</p>
        </div>
      ) : null}
      {p ? (
        <div className="disk-body">
          {p.imagefs && pictureNearGc(p) ? (
            <div className="banner banner-warning" data-testid="disk-near-gc">
              <AlertIcon className="banner-icon" />
              <div className="banner-text">
                <strong>
                  {points !== null && points <= 0
                    ? `The image file system is above kubelet's GC threshold (${formatPercent(p.policy.highPercent)}): kubelet is deleting images.`
                    : `The image file system is within ${formatPercent(Math.max(0, points ?? 0), '?', ' points')} of kubelet's GC threshold (${formatPercent(p.policy.highPercent)}).`}
                </strong>
                <span>Free space with Prune (it keeps every image in use, pinned or needed for rollback) before kubelet chooses for you.</span>
              </div>
            </div>
          ) : null}
          <section className="disk-section" aria-labelledby="fs-title">
            <h3 id="fs-title">Image file system (what kubelet's GC measures)</h3>
            {p.imagefs ? <DiskChart fs={p.imagefs} policy={p.policy} forecast={p.forecast} /> : <p className="muted">Not measured.</p>}
            <Thresholds p={p} />
            <table className="fs-table" data-testid="fs-table">
              <caption className="visually-hidden">File systems of the images dir, the content store and the snapshots</caption>
              <thead>
                <tr>
                  <th scope="col">File system of</th>
                  <th scope="col">Holds</th>
                  <th scope="col" className="num">
                    Size
                  </th>
                  <th scope="col" className="num">
                    Free
                  </th>
                  <th scope="col" className="num">
                    Used
                  </th>
                </tr>
              </thead>
              <tbody>
                {p.fileSystems.map((f) => (
                  <tr key={f.roles.join()} data-testid="fs-row">
                    <td>
                      <code className="path">{Object.values(f.paths)[0]}</code>
                    </td>
                    <td>{f.roles.map((r) => FS_ROLE_TEXT[r]).join(', ')}</td>
                    <td className="num">{f.totalBytes === null ? '?' : formatBytes(f.totalBytes)}</td>
                    <td className="num">{formatBytes(f.freeBytes)}</td>
                    <td className="num" title={`${formatPercent(kubeletUsagePercent(f))} as kubelet rounds it`}>
                      {formatPercent(usedPercentExact(f))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {[...p.policy.notes, ...p.notes].map((n) => (
              <p key={n} className="muted small" data-testid="disk-note">
                {n}
              </p>
            ))}
          </section>
          {p.forecast ? <Forecast f={p.forecast} images={p.images} who={who} /> : null}
          {p.images ? (
            <section className="disk-section" aria-labelledby="store-title">
              <h3 id="store-title">Image store, by image</h3>
              <StoreTable images={p.images} who={who} maxAge={p.policy.maxAge ? maxAgeWhen(p.policy.maxAge) : null} />
            </section>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
