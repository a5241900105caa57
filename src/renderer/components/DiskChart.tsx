// One bar for the image file system: used and free space against kubelet's thresholds (GC low
// and high marks, hard eviction), and what the GC forecast would free. Inline SVG, coloured by
// the stylesheet's classes (the CSP allows no inline styles); the numbers are also in the
// legend next to it and in the bar's accessible name.
import type { GcForecast } from '../../shared/gcForecast';
import { evictionAtPercent, usedPercentExact, type GcPolicy } from '../../shared/gcPolicy';
import type { FsUsage } from '../../shared/diskPicture';
import { formatPercent, formatBytes } from '../../shared/format';

const W = 1000;
const H = 44;
const BAR_Y = 10;
const BAR_H = 24;

const x = (percent: number) => Math.max(0, Math.min(W, (percent / 100) * W));

export function DiskChart({ fs, policy, forecast }: { fs: FsUsage; policy: GcPolicy; forecast: GcForecast | null }) {
  const used = usedPercentExact(fs) ?? 0;
  const total = fs.totalBytes ?? 0;
  const eviction = evictionAtPercent(policy.evictionHard.imagefs, fs.totalBytes);
  // What the forecast frees, drawn back from the high mark: where usage would land after GC.
  const freedPct = forecast?.measured && total > 0 ? (forecast.realFreed * 100) / total : 0;
  const after = Math.max(0, policy.highPercent - freedPct);
  const label =
    `Image file system ${formatPercent(used)} used (${formatBytes(total - fs.freeBytes)} of ${formatBytes(total)}), ${formatBytes(fs.freeBytes)} free. ` +
    `kubelet's image GC starts at ${formatPercent(policy.highPercent)} and frees down to ${formatPercent(policy.lowPercent)}` +
    (eviction !== null ? `; hard eviction at ${formatPercent(eviction)}` : '') +
    (forecast?.measured ? `; at ${formatPercent(policy.highPercent)} it would free ${formatBytes(forecast.realFreed)}, to about ${formatPercent(after)}.` : '.');
  return (
    <figure className="disk-chart" data-testid="disk-chart">
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={label} className="disk-chart-svg">
        <rect className="disk-free" x={0} y={BAR_Y} width={W} height={BAR_H} rx={4} />
        <rect className="disk-used" x={0} y={BAR_Y} width={x(used)} height={BAR_H} rx={4} data-testid="disk-used-bar" data-percent={used.toFixed(2)} />
        {forecast?.measured && freedPct > 0 ? (
          <rect className="disk-forecast" x={x(after)} y={BAR_Y - 4} width={x(policy.highPercent) - x(after)} height={BAR_H + 8} data-testid="disk-forecast-band" />
        ) : null}
        <line className="disk-mark disk-mark-low" x1={x(policy.lowPercent)} x2={x(policy.lowPercent)} y1={2} y2={H - 2} data-testid="disk-mark-low" />
        <line className="disk-mark disk-mark-high" x1={x(policy.highPercent)} x2={x(policy.highPercent)} y1={2} y2={H - 2} data-testid="disk-mark-high" />
        {eviction !== null ? <line className="disk-mark disk-mark-evict" x1={x(eviction)} x2={x(eviction)} y1={2} y2={H - 2} data-testid="disk-mark-evict" /> : null}
      </svg>
      <figcaption className="disk-legend">
        <span className="legend legend-used">
          <span className="swatch" aria-hidden="true" />
          Used <strong data-testid="disk-used-text">{formatPercent(used)}</strong> · {formatBytes(total - fs.freeBytes)} of {formatBytes(total)}
        </span>
        <span className="legend legend-free">
          <span className="swatch" aria-hidden="true" />
          Free {formatBytes(fs.freeBytes)}
        </span>
        <span className="legend legend-low">
          <span className="swatch" aria-hidden="true" />
          GC frees to {formatPercent(policy.lowPercent)}
        </span>
        <span className="legend legend-high">
          <span className="swatch" aria-hidden="true" />
          GC starts at {formatPercent(policy.highPercent)}
        </span>
        {eviction !== null ? (
          <span className="legend legend-evict">
            <span className="swatch" aria-hidden="true" />
            Eviction at {formatPercent(eviction)}
          </span>
        ) : null}
        {forecast?.measured ? (
          <span className="legend legend-forecast">
            <span className="swatch" aria-hidden="true" />
            GC would free {formatBytes(forecast.realFreed)}
          </span>
        ) : null}
      </figcaption>
    </figure>
  );
}
