// A small windowed list for tables with thousands of rows (no dependency): fixed row height,
// plus the measured height of the few rows that are expanded, prefix sums for offsets, binary
// search for the visible range, and overscan. Only the rows in (and near) the viewport exist in
// the DOM; two spacer rows keep the scroll height right.
//
// Rows ahead in the direction of scrolling are added while the browser is idle, a few per idle
// slot: a wheel step then lands on rows that already exist, instead of rendering and laying out
// a screenful of new rows in the frame that scrolls (the long tasks while wheeling).
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type RefObject } from 'react';

/**
 * Rows added per idle slot: two rows' render, table layout and paint fit one idle period on a
 * busy 2-core machine; four overran a frame often enough to put the p99 frame at 33 ms (bench:ui).
 */
const GROW_ROWS = 2;

/** How long after the last scroll event the list counts as at rest again (hover comes back). */
const SCROLL_SETTLE_MS = 150;

/** Runs fn when the browser is idle (at the latest after 500 ms); a timer where there is no idle callback. */
function later(fn: () => void): number {
  return typeof requestIdleCallback === 'function' ? requestIdleCallback(fn, { timeout: 500 }) : window.setTimeout(fn, 16);
}

/** The most a scroller can show, when there is none to measure: the window's height (900 px without a window). */
function firstViewport(): number {
  return typeof window !== 'undefined' && window.innerHeight > 0 ? window.innerHeight : 900;
}

/** offsets[i] = top of row i; offsets[count] = total height. */
export function rowOffsets(count: number, rowHeight: number, extraOf: (i: number) => number): Float64Array {
  const off = new Float64Array(count + 1);
  for (let i = 0; i < count; i++) off[i + 1] = off[i]! + rowHeight + extraOf(i);
  return off;
}

/** The first index whose row ends below y (0…count-1; count when y is past the end). */
export function indexAt(offsets: Float64Array, y: number): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid + 1]! <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** [start, end) of the rows to render for a viewport, with overscan in pixels on both sides. */
export function visibleRange(offsets: Float64Array, scrollTop: number, viewport: number, overscanPx: number): [number, number] {
  const count = offsets.length - 1;
  if (count <= 0) return [0, 0];
  const start = Math.min(count - 1, indexAt(offsets, Math.max(0, scrollTop - overscanPx)));
  const end = Math.min(count, indexAt(offsets, scrollTop + viewport + overscanPx) + 1);
  return [start, end];
}

/**
 * The window after the viewport moved to `top`. The rows already rendered stay while they cover
 * the viewport plus a third of the overscan: no React commit and no table layout for a wheel
 * step that lands on rows idle time added. When scrolling outran that growth (a fast wheel, a
 * drag of the scrollbar), the rows that must show in this very frame are added — the viewport
 * and that third — and not the full overscan ahead: every row added here is styled, laid out and
 * painted before the frame can show (the slow frames left in bench:ui), while idle time adds the
 * rest right after. Rows far behind go at once (removing is cheap).
 */
export function windowAfterScroll(prev: readonly [number, number], offsets: Float64Array, top: number, viewport: number, overscanPx: number): [number, number] {
  const need = visibleRange(offsets, top, viewport, overscanPx / 3);
  const count = offsets.length - 1;
  // The first window (or the first since the list was empty), or one past the end of a list that
  // shrank, or no row in common: just what is on screen.
  if (prev[0] === prev[1] || prev[1] > count || prev[1] <= need[0] || prev[0] >= need[1]) return need;
  if (prev[0] <= need[0] && prev[1] >= need[1]) return [prev[0], prev[1]];
  const keep = visibleRange(offsets, top, viewport, overscanPx);
  const start = need[0] < prev[0] ? need[0] : Math.max(prev[0], keep[0]);
  const end = need[1] > prev[1] ? need[1] : Math.min(prev[1], keep[1]);
  return [start, end];
}

export interface VirtualRows {
  start: number;
  end: number;
  offsets: Float64Array;
  padTop: number;
  padBottom: number;
  /** Scroll so that row i is fully visible. */
  scrollToIndex(i: number): void;
}

/**
 * Windowing for a scroll container holding a table: `headerRef` is the sticky header whose
 * height sits above row 0.
 */
export function useVirtualRows(opts: {
  count: number;
  rowHeight: number;
  extraOf: (i: number) => number;
  /** Changes whenever extraOf would answer differently. */
  extraKey: unknown;
  scrollRef: RefObject<HTMLElement | null>;
  headerRef: RefObject<HTMLElement | null>;
  overscanPx?: number;
  /** How far ahead of the viewport, in the scroll direction, idle time renders rows (px). */
  aheadPx?: number;
}): VirtualRows {
  const { count, rowHeight, scrollRef, headerRef } = opts;
  // Behind the viewport only what a small step back needs: every row in the window is laid out
  // again with each change of it (a table), so rows kept far behind cost every frame that grows it.
  const overscanPx = opts.overscanPx ?? 300;
  const aheadPx = opts.aheadPx ?? 1800;
  // oxlint-disable-next-line react/exhaustive-deps -- extraKey names what extraOf depends on (extraOf is a fresh closure each render)
  const offsets = useMemo(() => rowOffsets(count, rowHeight, opts.extraOf), [count, rowHeight, opts.extraKey]);
  // The first commit has no rows: the layout effect below measures the scroller and renders just
  // the rows it shows, before the first paint. Every row of that paint is rendered, styled, laid
  // out and painted before the user sees any (bench:ui, first rows: the old 1,200 px guess
  // rendered twice as many); idle time adds the rest.
  const [range, setRange] = useState<[number, number]>([0, 0]);
  const offsetsRef = useRef(offsets);
  offsetsRef.current = offsets;
  const rangeRef = useRef(range);
  rangeRef.current = range;

  // Where the viewport is and which way it last moved: what the idle growth works toward.
  const view = useRef({ top: 0, viewport: 900, dir: 1 as 1 | -1 });
  const idle = useRef<number | null>(null);

  /** The range worth having when idle: the viewport, `aheadPx` in the scroll direction, the overscan behind. */
  const target = useCallback((): [number, number] => {
    const { top, viewport, dir } = view.current;
    const off = offsetsRef.current;
    const count = off.length - 1;
    const before = dir < 0 ? aheadPx : overscanPx;
    const after = dir > 0 ? aheadPx : overscanPx;
    return [Math.min(Math.max(0, count - 1), indexAt(off, Math.max(0, top - before))), Math.min(count, indexAt(off, top + viewport + after) + 1)];
  }, [aheadPx, overscanPx]);

  // Grows the range toward target() a few rows per idle slot, until it is reached.
  const schedule = useCallback(() => {
    if (idle.current !== null) return;
    const step = () => {
      idle.current = null;
      const [ts, te] = target();
      // Computed from the range last rendered (not inside a state updater, which React may run
      // later): whether to go on must be known now.
      const prev = rangeRef.current;
      if (prev[1] <= ts || prev[0] >= te) return; // a jump: update() sets the range, not this
      // Rows far behind go at once (removing is cheap); rows toward the target come a few at a time.
      const s = prev[0] < ts ? ts : Math.max(ts, prev[0] - GROW_ROWS);
      const e = prev[1] > te ? te : Math.min(te, prev[1] + GROW_ROWS);
      if (s !== prev[0] || e !== prev[1]) {
        rangeRef.current = [s, e];
        setRange([s, e]);
      }
      const more = s > ts || e < te;
      if (more) idle.current = later(step);
    };
    idle.current = later(step);
  }, [target]);

  useEffect(
    () => () => {
      if (idle.current === null) return;
      if (typeof cancelIdleCallback === 'function') cancelIdleCallback(idle.current);
      else clearTimeout(idle.current);
      idle.current = null;
    },
    [],
  );

  const update = useCallback(() => {
    const el = scrollRef.current;
    if (!el) {
      // Nothing to measure (not mounted in a scroller): as many rows as the window is tall.
      setRange((prev) => (prev[0] === prev[1] ? visibleRange(offsetsRef.current, 0, firstViewport(), 0) : prev));
      return;
    }
    const head = headerRef.current?.offsetHeight ?? 0;
    const top = Math.max(0, el.scrollTop - head);
    const viewport = el.clientHeight || 900;
    if (top !== view.current.top) view.current.dir = top > view.current.top ? 1 : -1;
    view.current.top = top;
    view.current.viewport = viewport;
    // Keep, extend or replace the rendered rows (windowAfterScroll says which and why); a kept
    // window is never larger than a fresh one plus what idle time added ahead.
    const off = offsetsRef.current;
    setRange((prev) => {
      const w = windowAfterScroll(prev, off, top, viewport, overscanPx);
      return w[0] === prev[0] && w[1] === prev[1] ? prev : w;
    });
    schedule();
  }, [scrollRef, headerRef, overscanPx, schedule]);

  useLayoutEffect(update, [update, offsets]);

  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    // While the list scrolls its rows take no pointer events (`[data-scrolling]` in styles.css):
    // with the mouse resting on the list, every scroll step would otherwise move the hover to
    // another row — a hit test, a style change and a repaint in the very frames that scroll.
    let settle: number | undefined;
    const onScroll = () => {
      if (settle === undefined) el.dataset.scrolling = '';
      else clearTimeout(settle);
      settle = window.setTimeout(() => {
        settle = undefined;
        delete el.dataset.scrolling;
      }, SCROLL_SETTLE_MS);
      update();
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    const ro = typeof ResizeObserver === 'function' ? new ResizeObserver(update) : null;
    ro?.observe(el);
    return () => {
      el.removeEventListener('scroll', onScroll);
      if (settle !== undefined) clearTimeout(settle);
      delete el.dataset.scrolling;
      ro?.disconnect();
    };
  }, [scrollRef, update]);

  const scrollToIndex = useCallback(
    (i: number) => {
      const el = scrollRef.current;
      if (!el) return;
      const off = offsetsRef.current;
      const head = headerRef.current?.offsetHeight ?? 0;
      const top = off[i]!;
      const bottom = top + rowHeight;
      const viewTop = el.scrollTop;
      const viewBottom = el.scrollTop + el.clientHeight - head;
      if (top < viewTop) el.scrollTop = top;
      else if (bottom > viewBottom) el.scrollTop = bottom - (el.clientHeight - head);
    },
    [scrollRef, headerRef, rowHeight],
  );

  const [start, end] = range[0] <= count && range[1] <= count ? range : visibleRange(offsets, 0, 900, overscanPx);
  return { start, end, offsets, padTop: offsets[start] ?? 0, padBottom: (offsets[count] ?? 0) - (offsets[end] ?? 0), scrollToIndex };
}
