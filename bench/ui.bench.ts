// `npm run bench:ui` — one node with 10,000 references (5,000 images: a tag and a digest
// reference each), served by the real service over a fake node (test/doubles/service.ts) to the built UI in Chromium. Measures what a
// technician feels — time until the table shows rows, frame times while wheeling through the
// WHOLE list, sorting and filtering — prints the numbers and writes them to bench/ui-results.md.
// A benchmark, not a test: it asserts only that it measured the right thing (rows on screen, the
// sort and filters applied), never how fast; milliseconds depend on the machine and its load.
// The structural checks (windowing, every row reachable, sort and filters) run in
// e2e/perf.spec.ts as part of `npm test`.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '../e2e/fixtures';
import { fakeService } from '../test/doubles/service';
import { machineLine, writeBenchSection } from './doc';

const REFS = 10_000;
/** Page loads whose median is the first-render figure. */
const LOADS = 3;
const resultsFile = path.resolve(import.meta.dirname, 'ui-results.md');
/** This run's figures (machine-readable), and the figures of the code before issue #13's work, measured by this same benchmark. */
const resultsJson = path.resolve(import.meta.dirname, 'ui-results.json');
const baselineJson = path.resolve(import.meta.dirname, 'ui-baseline.json');

/** The targets (#13): what the table in docs/benchmarks.md compares each figure with. */
const TARGET = { afterAnswer: 300, longTasks: 0, p99: 20, sortFilter: 100 };

interface Figures {
  commit: string;
  machine: string;
  /** Idle baseline of this machine in the same run: a fixed CPU loop and frames with nothing happening. */
  spinMs: number;
  /** µs to first touch one fresh 4 KiB page in the page (a 64 MiB buffer filled, median of 5); absent in older runs. */
  pageTouchUs?: number;
  /** Share of the scrolling frames that took longer than one 60 Hz frame (p99 ≤ 20 ms needs under 1 %); absent in older runs. */
  slowFrames?: number;
  idleP50: number;
  idleP99: number;
  idleLongTasks: number;
  /** images.list as plain JSON, one object per reference (what crossed before packing). */
  jsonBytes: number;
  jsonParseMs: number;
  /** images.list as it crosses now (src/shared/wirePack.ts); absent in older runs. */
  packedBytes?: number;
  packedParseMs?: number;
  answeredAt: number;
  firstPaintAt: number;
  afterAnswer: number;
  /** Each page load's afterAnswer (afterAnswer is their median); absent in older runs. */
  afterAnswerRuns?: number[];
  remount: number;
  frames: number;
  p50: number;
  p95: number;
  p99: number;
  worst: number;
  longTasks: number;
  longTotal: number;
  sortSize: number;
  search: number;
  atRisk: number;
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
}
const ms = (v: number) => `${v.toFixed(1)} ms`;

type Step = 'remount' | 'sortSize' | 'search' | 'atRisk';

/**
 * In the page: do one step, then wait until its result is on screen, checked on each animation
 * frame; answers the ms from the step to the frame after that (what the user sees). The page's
 * CSP forbids eval, so the steps are spelled out here rather than passed as code.
 */
async function timeInPage(page: Page, step: Step): Promise<number> {
  return page.evaluate(
    (step) =>
      new Promise<number>((resolve) => {
        const q = (sel: string) => document.querySelector<HTMLElement>(sel);
        const setSearch = (v: string) => {
          const i = q('[data-testid="image-search"]') as HTMLInputElement;
          Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(i, v);
          i.dispatchEvent(new Event('input', { bubbles: true }));
        };
        const t0 = performance.now();
        let done: () => boolean;
        if (step === 'remount') {
          q('[data-testid="tab-images"]')!.click();
          done = () => q('[data-testid="image-row"]') !== null;
        } else if (step === 'sortSize') {
          [...document.querySelectorAll<HTMLElement>('button.sort')].find((b) => b.textContent!.startsWith('Size'))!.click();
          done = () => q('th.col-size')?.getAttribute('aria-sort') === 'descending' && q('[data-testid="image-row"]') !== null;
        } else if (step === 'search') {
          setSearch('service-4242');
          done = () => document.querySelectorAll('[data-testid="image-row"]').length === 1;
        } else {
          q('[data-testid="filter-atRisk"]')!.click();
          done = () =>
            q('[data-testid="filter-atRisk"]')!.getAttribute('aria-pressed') === 'true' &&
            document.querySelectorAll('[data-testid="image-row"]').length > 5 &&
            document.querySelectorAll('[data-testid="image-row"]:not([data-fate="lose"])').length === 0;
        }
        const check = () => {
          if (done()) requestAnimationFrame(() => resolve(performance.now() - t0));
          else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }),
    step,
  );
}

const REPEATS = 5;

/** The median of REPEATS timings of `step`, each after `reset` and a quiet moment. */
async function medianOf(page: Page, step: Step, reset: () => Promise<void>): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    await reset();
    await page.waitForTimeout(300);
    runs.push(await timeInPage(page, step));
  }
  return runs.sort((x, y) => x - y)[Math.floor(REPEATS / 2)]!;
}

/** The same fixed CPU loop in the page, idle: how fast this machine is right now (median of 5). */
async function spin(page: Page): Promise<number> {
  return page.evaluate(() => {
    const runs: number[] = [];
    let sink = 0;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      for (let i = 0; i < 20_000_000; i++) sink = (sink + i * 31) % 1_000_003;
      runs.push(performance.now() - t0);
    }
    (window as unknown as { __sink: number }).__sink = sink;
    return runs.sort((a, b) => a - b)[2]!;
  });
}

/**
 * What the first touch of fresh memory costs in this page: everything between the list's answer
 * and the first rows allocates (parsing, grouping, DOM), and on some virtual machines a new page
 * costs 15 µs instead of well under one.
 */
async function pageTouch(page: Page): Promise<number> {
  return page.evaluate(() => {
    const runs: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      new Uint8Array(64 << 20).fill(1);
      runs.push(((performance.now() - t0) * 1000) / 16384);
    }
    return runs.sort((a, b) => a - b)[2]!;
  });
}

/** Frame times and long tasks for `ms` with nothing happening. */
async function idle(page: Page, ms: number): Promise<{ frames: number[]; long: number }> {
  return page.evaluate(
    (ms) =>
      new Promise<{ frames: number[]; long: number }>((resolve) => {
        const out: number[] = [];
        let long = 0;
        const obs = new PerformanceObserver((l) => (long += l.getEntries().length));
        obs.observe({ type: 'longtask', buffered: false });
        let last = performance.now();
        const end = last + ms;
        const frame = (t: number) => {
          out.push(t - last);
          last = t;
          if (t < end) requestAnimationFrame(frame);
          else {
            obs.disconnect();
            resolve({ frames: out.slice(1), long });
          }
        };
        requestAnimationFrame(frame);
      }),
    ms,
  );
}

function gitCommit(): string {
  try {
    const root = path.resolve(import.meta.dirname, '..');
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src/renderer', 'src/shared'], { cwd: root, encoding: 'utf8' }).trim();
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

let fake: Awaited<ReturnType<typeof fakeService>> | undefined;
test.afterEach(async () => {
  await fake?.dispose();
  fake = undefined;
});

/** Times of one load's first rows (markFirstRows in its init script): images.list answered → painted. */
async function firstRowsOf(p: Page): Promise<{ answered: number; painted: number; inDom: number; longest: number }> {
  await p.waitForFunction(() => (window as unknown as { __hf: { painted?: number } }).__hf.painted !== undefined, undefined, { polling: 500, timeout: 30_000 });
  await expect(p.getByTestId('image-row').first()).toBeVisible();
  return p.evaluate(() => {
    const hf = (window as unknown as { __hf: { inDom: number; painted: number; long: { start: number; duration: number }[] } }).__hf;
    const list = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((r) => r.name.endsWith('/api/images.list'));
    const answered = list?.responseEnd ?? 0;
    const between = hf.long.filter((t) => t.start + t.duration > answered && t.start < hf.painted);
    return { answered, painted: hf.painted, inDom: hf.inDom, longest: Math.max(0, ...between.map((t) => t.duration)) };
  });
}

test('10,000 references: first render, scrolling the whole list, sort and filter', async ({ holdfast, page: tab }) => {
  test.setTimeout(300_000);
  // One node (the app opens it directly), answering at once: the UI is what is measured.
  const service = await fakeService({ manyRefs: REFS, latencyMs: 0 });
  fake = service;
  // Before the app's first script: note when the first image row enters the DOM and when the
  // frame that shows it has been painted (a task posted from that frame's requestAnimationFrame
  // runs after its paint), and every long task from the start.
  const markFirstRows = () => {
    const w = window as unknown as { __hf: { inDom?: number; painted?: number; long: { start: number; duration: number }[] } };
    w.__hf = { long: [] };
    try {
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) w.__hf.long.push({ start: e.startTime, duration: e.duration });
      }).observe({ type: 'longtask', buffered: true });
    } catch {
      // no long task API
    }
    const mo = new MutationObserver(() => {
      if (!document.querySelector('[data-testid="image-row"]')) return;
      mo.disconnect();
      w.__hf.inDom = performance.now();
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => (w.__hf.painted = performance.now());
        ch.port2.postMessage(0);
      });
    });
    mo.observe(document, { subtree: true, childList: true });
  };
  await tab.addInitScript(markFirstRows);
  const page = await holdfast.open({ handlers: service.handlers });

  // 1. First render: images.list answered (its response's last byte, resource timing) → the first
  //    rows painted (parse, grouping, sorting, rendering); and from navigation, for the whole picture.
  // Waited for with a cheap check twice a second, not a locator: Playwright's visibility polling
  // runs in the page (an accessibility snapshot of it on each retry) and lengthened the very
  // tasks measured here by about 100 ms.
  // One load is one sample of a figure that moves with the machine (page faults, GC; ±25 % here
  // from one load to the next): this one, and LOADS - 1 more after everything else is measured
  // (their renderer processes come and go then, not while the list scrolls); the median of them.
  const loads = [await firstRowsOf(page)];
  await expect(page.getByTestId('images-summary')).toContainText('5000 images · 10000 references');
  // Where that time went (resource timings of the page and its API calls).
  const phases = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    const api = (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((r) => r.name.includes('/api/') && !r.name.endsWith('/api/events'))
      .map((r) => ({ name: r.name.split('/api/')[1]!, start: r.startTime, end: r.responseEnd, bytes: r.encodedBodySize }));
    return { domContentLoaded: nav.domContentLoadedEventEnd, api };
  });
  const list = phases.api.find((a) => a.name === 'images.list');

  // The wire format, measured in this page (median of 5 parses each): images.list as it crosses
  // (packed, src/shared/wirePack.ts; the same request as the app's), and the same list as plain
  // JSON, one object per reference (what crossed before; built from the service's own answer).
  const plain = JSON.stringify({ ok: true, result: await service.handlers['images.list']({ node: 'edge-01' }) });
  const wire = await page.evaluate(async ({ node, plain }) => {
    const res = await fetch('/api/images.list', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-holdfast-token': sessionStorage.getItem('holdfast.token') ?? '' },
      body: JSON.stringify({ node }),
    });
    const packed = await res.text();
    const parse = (text: string) => {
      const runs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        JSON.parse(text);
        runs.push(performance.now() - t0);
      }
      return runs.sort((a, b) => a - b)[2]!;
    };
    const size = (text: string) => new TextEncoder().encode(text).length;
    return { bytes: size(plain), parse: parse(plain), packedBytes: size(packed), packedParse: parse(packed) };
  }, { node: 'edge-01', plain });

  const domRows = await page.getByTestId('image-row').count();

  // 2. Re-render with the data already loaded: Archives tab → Images tab (table mounts again).
  await page.getByTestId('tab-archives').click();
  await expect(page.getByTestId('images-table')).toHaveCount(0);
  const remount = await timeInPage(page, 'remount');

  // Baseline: this machine right now, in the same run — a fixed CPU loop, and frame times and long
  // tasks of this browser with nothing happening (3 s).
  const spinMs = await spin(page);
  const pageTouchUs = await pageTouch(page);
  const { frames: idleFrames, long: idleLong } = await idle(page, 3000);

  // 3. Wheel through the whole list, recording every animation frame and any long task.
  await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __long: number[]; __stop: boolean; __maxRows: number };
    w.__frames = [];
    w.__long = [];
    w.__stop = false;
    w.__maxRows = 0;
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__long.push(e.duration);
      }).observe({ type: 'longtask', buffered: false });
    } catch {
      // no long task API: frame times still tell
    }
    let last = performance.now();
    const frame = (t: number) => {
      w.__frames.push(t - last);
      last = t;
      w.__maxRows = Math.max(w.__maxRows, document.querySelectorAll('[data-testid="image-row"]').length);
      if (!w.__stop) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
  const scroller = page.getByTestId('images-scroll');
  const box = (await scroller.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const total = await scroller.evaluate((el) => el.scrollHeight);
  // HOLDFAST_BENCH_TRACE=FILE: a Chromium trace of the scroll phase (what a slow frame or a long
  // task was made of). Tracing costs time itself: the figures of such a run are not the table's.
  const traceFile = process.env.HOLDFAST_BENCH_TRACE;
  const browser = page.context().browser();
  if (traceFile && browser) await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'blink', 'cc', 'gpu'] });
  const started = Date.now();
  let wheels = 0;
  for (;;) {
    await page.mouse.wheel(0, 800);
    wheels++;
    const atEnd = await scroller.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 2);
    if (atEnd || wheels > 2000) break;
  }
  const scrollSeconds = (Date.now() - started) / 1000;
  if (traceFile && browser) await writeFile(traceFile, await browser.stopTracing());
  const { frames, longTasks, maxRows } = await page.evaluate(() => {
    const w = window as unknown as { __frames: number[]; __long: number[]; __stop: boolean; __maxRows: number };
    w.__stop = true;
    return { frames: w.__frames.slice(1), longTasks: w.__long, maxRows: w.__maxRows };
  });
  // The last image (by name: service-971 sorts last) is on screen at the bottom.
  await expect(page.getByTestId('image-row').last()).toHaveAttribute('data-index', '4999');
  await expect(page.getByTestId('image-row').last()).toBeInViewport();

  // 4. Sort by size (5,000 images), then filter by a search term, then the "At risk" chip: each
  //    the median of REPEATS, from the same starting state each time (one run varies by ±40 %
  //    here: garbage collection, the idle growth of the table's rows).
  const search = page.getByTestId('image-search');
  const sortSize = await medianOf(page, 'sortSize', async () => {
    // by name, ascending (a click on the current sort column flips its direction)
    const byName = page.locator('th.col-refs');
    for (let i = 0; i < 2 && (await byName.getAttribute('aria-sort')) !== 'ascending'; i++) await page.locator('button.sort', { hasText: /^References/ }).click();
    await expect(byName).toHaveAttribute('aria-sort', 'ascending');
    await page.getByTestId('images-scroll').evaluate((el) => (el.scrollTop = 0));
  });
  const filter = await medianOf(page, 'search', async () => {
    await search.fill('');
    await expect.poll(() => page.getByTestId('image-row').count()).toBeGreaterThan(5);
  });
  await expect(search).toHaveValue('service-4242');
  await expect(page.getByTestId('image-row')).toHaveCount(1);
  const pinFilter = await medianOf(page, 'atRisk', async () => {
    await search.fill('');
    await page.getByTestId('filter-all').click();
    await expect.poll(() => page.getByTestId('image-row').count()).toBeGreaterThan(5);
  });

  // The other cold loads of the first render: each a fresh browser context (its own renderer
  // process, no HTTP or code cache), as cold as the first; a reload would find the scripts
  // compiled and cached.
  for (let k = 1; k < LOADS; k++) {
    const ctx = await page.context().browser()!.newContext({ viewport: page.viewportSize() });
    const p = await ctx.newPage();
    await p.addInitScript(markFirstRows);
    await p.goto(holdfast.server()!.url);
    loads.push(await firstRowsOf(p));
    await ctx.close();
  }
  const afterAnswerRuns = loads.map((l) => l.painted - l.answered);
  const firstPaint = [...loads].sort((a, b) => a.painted - a.answered - (b.painted - b.answered))[Math.floor(LOADS / 2)]!;
  const firstRender = firstPaint.painted;

  const p50 = pct(frames, 50);
  const p95 = pct(frames, 95);
  const p99 = pct(frames, 99);
  const worst = Math.max(...frames);
  const longTotal = longTasks.reduce((a, b) => a + b, 0);
  const now: Figures = {
    commit: gitCommit(),
    machine: machineLine(),
    spinMs,
    pageTouchUs,
    slowFrames: frames.filter((f) => f > 17).length / frames.length,
    idleP50: pct(idleFrames, 50),
    idleP99: pct(idleFrames, 99),
    idleLongTasks: idleLong,
    jsonBytes: wire.bytes,
    jsonParseMs: wire.parse,
    packedBytes: wire.packedBytes,
    packedParseMs: wire.packedParse,
    answeredAt: firstPaint.answered,
    firstPaintAt: firstRender,
    afterAnswer: firstPaint.painted - firstPaint.answered,
    afterAnswerRuns,
    remount,
    frames: frames.length,
    p50,
    p95,
    p99,
    worst,
    longTasks: longTasks.length,
    longTotal,
    sortSize,
    search: filter,
    atRisk: pinFilter,
  };
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    '# Performance: 10,000 references on one node',
    '',
    `Measured by \`npm run bench:ui\` (bench/ui.bench.ts; written by the benchmark, not by hand) in headless Chromium`,
    `(/usr/bin/chromium, --disable-gpu, 1360×860) on ${os.cpus().length} × ${cpu}, ${new Date().toISOString().slice(0, 10)}, code ${now.commit}.`,
    `Load average when measured: ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} (1 / 5 / 15 min).`,
    `The real service over a fake node serves ${REFS.toLocaleString('en')} references (${(REFS / 2).toLocaleString('en')} images) over the loopback HTTP transport.`,
    '',
    '| what | measured |',
    '|---|---|',
    `| **idle baseline** (same run): fixed CPU loop (20 M iterations, median of 5) | ${ms(spinMs)} |`,
    `| **idle baseline**: first touch of a fresh 4 KiB page (64 MiB filled, median of 5) | ${pageTouchUs.toFixed(2)} µs |`,
    `| **idle baseline**: frame time with nothing happening p50 / p99, long tasks in 3 s | ${ms(now.idleP50)} / ${ms(now.idleP99)}, ${idleLong} |`,
    `| images.list as it crosses (packed): size / JSON.parse in the page (median of 5) | ${(wire.packedBytes / 1e6).toFixed(2)} MB / ${ms(wire.packedParse)} |`,
    `| … the same list as plain JSON, one object per reference: size / JSON.parse | ${(wire.bytes / 1e6).toFixed(2)} MB / ${ms(wire.parse)} |`,
    `| images.list answered → first rows painted (parse, grouping, sort, render; median of ${LOADS} cold loads; target ≤ ${TARGET.afterAnswer} ms) | ${ms(now.afterAnswer)} (first load, then fresh contexts: ${afterAnswerRuns.map((v) => v.toFixed(1)).join(' / ')} ms; longest task between, median load: ${ms(firstPaint.longest)}) |`,
    `| navigation → images.list answered / → first rows painted | ${ms(firstPaint.answered)} / ${ms(firstRender)} |`,
    `| … page loaded (DOMContentLoaded) / images.list received, first load (${((list?.bytes ?? 0) / 1e6).toFixed(1)} MB) | ${ms(phases.domContentLoaded)} / ${ms(list?.end ?? 0)} |`,
    `| re-render of the table with data loaded (tab switch) | ${ms(remount)} |`,
    `| rows in the DOM (of 5,000) at first render / at most while scrolling | ${domRows} / ${maxRows} |`,
    `| wheel through the whole list (${(total / 1000).toFixed(0)}k px, ${wheels} wheel events of 800 px) | ${scrollSeconds.toFixed(1)} s |`,
    `| frame time while scrolling: p50 / p95 / p99 / worst (${frames.length} frames; target p99 ≤ ${TARGET.p99} ms) | ${ms(p50)} / ${ms(p95)} / ${ms(p99)} / ${ms(worst)} |`,
    `| frames longer than 17 ms while scrolling (p99 ≤ ${TARGET.p99} ms needs under 1 %) | ${(100 * now.slowFrames!).toFixed(1)} % |`,
    `| long tasks (> 50 ms) while scrolling (target ${TARGET.longTasks}) | ${longTasks.length} (${ms(longTotal)} total) |`,
    `| sort 5,000 images by size → painted (median of ${REPEATS}; target ≤ ${TARGET.sortFilter} ms) | ${ms(sortSize)} |`,
    `| type a search term → 1 row painted (median of ${REPEATS}) | ${ms(filter)} |`,
    `| pin filter "At risk" → painted (median of ${REPEATS}) | ${ms(pinFilter)} |`,
    '',
  ];
  const md = lines.join('\n');
  console.log(`\n${md}`);
  await writeFile(resultsFile, md);
  await writeFile(resultsJson, `${JSON.stringify(now, null, 2)}\n`);
  writeBenchSection('ui', docTable(now, existsSync(baselineJson) ? (JSON.parse(readFileSync(baselineJson, 'utf8')) as Figures) : null));
});

/** The table in docs/benchmarks.md: the code before issue #13's work (bench/ui-baseline.json) beside this run, each with its idle baseline. */
function docTable(now: Figures, before: Figures | null): string {
  const b = (f: (x: Figures) => string) => (before ? f(before) : '—');
  const row = (what: string, target: string, f: (x: Figures) => string) => `| ${what} | ${target} | ${b(f)} | ${f(now)} |`;
  return [
    `\`npm run bench:ui\` — one node with 10,000 references (5,000 images) in Debian's headless Chromium`,
    `(bench/ui.bench.ts, the real service over a fake node, loopback HTTP; full table in [bench/ui-results.md](../bench/ui-results.md)).`,
    'Every column carries the idle baseline measured in its own run: the machine is shared and noisy.',
    '',
    `| | target | before (${b((x) => x.commit)}) | now (${now.commit}) |`,
    '|---|---|---|---|',
    row('idle baseline: fixed CPU loop', '', (x) => ms(x.spinMs)),
    row('idle baseline: frame p50 / p99, long tasks in 3 s', '', (x) => `${ms(x.idleP50)} / ${ms(x.idleP99)}, ${x.idleLongTasks}`),
    row('idle baseline: first touch of a fresh 4 KiB page', '', (x) => (x.pageTouchUs === undefined ? 'not measured' : `${x.pageTouchUs.toFixed(2)} µs`)),
    row('images.list on the wire: size / JSON.parse', '', (x) =>
      x.packedBytes === undefined || x.packedParseMs === undefined
        ? `${(x.jsonBytes / 1e6).toFixed(2)} MB / ${ms(x.jsonParseMs)} (plain JSON)`
        : `${(x.packedBytes / 1e6).toFixed(2)} MB / ${ms(x.packedParseMs)} packed (plain JSON: ${(x.jsonBytes / 1e6).toFixed(2)} MB / ${ms(x.jsonParseMs)})`,
    ),
    row('images.list answered → first rows painted', `≤ ${TARGET.afterAnswer} ms`, (x) => (x.afterAnswerRuns ? `${ms(x.afterAnswer)} (median of ${x.afterAnswerRuns.map((v) => v.toFixed(0)).join(' / ')})` : ms(x.afterAnswer))),
    row('navigation → first rows painted', '', (x) => ms(x.firstPaintAt)),
    row('scroll the whole list: long tasks > 50 ms', `${TARGET.longTasks}`, (x) => `${x.longTasks} (${ms(x.longTotal)})`),
    row('scroll the whole list: frame p50 / p99 / worst', `p99 ≤ ${TARGET.p99} ms`, (x) => `${ms(x.p50)} / ${ms(x.p99)} / ${ms(x.worst)}`),
    row('scroll the whole list: frames longer than 17 ms', '< 1 % (for p99)', (x) => (x.slowFrames === undefined ? 'not measured' : `${(100 * x.slowFrames).toFixed(1)} %`)),
    row('sort 5,000 images by size → painted', `≤ ${TARGET.sortFilter} ms`, (x) => ms(x.sortSize)),
    row('search term → painted', `≤ ${TARGET.sortFilter} ms`, (x) => ms(x.search)),
    row('pin filter "At risk" → painted', `≤ ${TARGET.sortFilter} ms`, (x) => ms(x.atRisk)),
    '',
    `Before: ${before?.machine ?? 'not measured'}.  `,
    `Now: ${now.machine}.`,
  ].join('\n');
}
