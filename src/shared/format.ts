// The one way Holdfast writes sizes and digests for people: the app, the CLI, the HTML/CSV
// reports and every message. Binary units, one decimal below 100 of a unit (a trailing ".0"
// dropped), whole numbers from 100 up: "17 B", "1.5 KiB", "12 MiB", "15.5 GiB", "141 MiB".

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** A byte count for people; `unknown` for null, negative or not-finite input. */
export function formatBytes(bytes: number | null | undefined, unknown = '—'): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return unknown;
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  let shown = i === 0 || v >= 100 ? Math.round(v) : Number(v.toFixed(1));
  // 1023.96 KiB rounds to 1024: say 1 MiB
  if (shown >= 1024 && i < UNITS.length - 1) {
    shown = 1;
    i++;
  }
  return `${shown} ${UNITS[i]}`;
}

/** "sha256:0123456789abcdef…" → "0123456789ab" (the 12 hex digits docker and crictl print). */
export function shortDigest(id: string | null | undefined, unknown = '—'): string {
  if (!id) return unknown;
  return id.slice(id.indexOf(':') + 1).slice(0, 12);
}

/** A time left or taken, whole seconds rounded up: "4 s", "2 min 05 s", "1 h 03 min"; `unknown` for null, negative or not finite. */
export function formatDuration(seconds: number | null | undefined, unknown = '—'): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return unknown;
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * A percentage for people, the one way everywhere (used space, thresholds, eviction): one decimal,
 * a trailing ".0" dropped — "82 %", "69.9 %", "85 %". Never "100 %" for a disk that is not full
 * nor "0 %" for one that is not empty. `unit` lets the same figure read "3.5 points".
 */
export function formatPercent(percent: number | null | undefined, unknown = '?', unit = ' %'): string {
  if (percent === null || percent === undefined || !Number.isFinite(percent)) return unknown;
  let v = Math.round(percent * 10) / 10;
  if (v >= 100 && percent < 100) v = 99.9;
  else if (v <= 0 && percent > 0) v = 0.1;
  return `${v}${unit}`;
}
