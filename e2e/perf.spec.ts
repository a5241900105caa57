// Scale, structurally: one node with 10,000 references (5,000 images: a tag and a digest
// reference each), served by the real service over a fake node to the built UI in Chromium. The table is windowed
// (only rows near the viewport exist, wherever it is scrolled), every row is reachable, and sort,
// search and the pin filter apply to all 5,000 images. How fast that is, is measured by
// `npm run bench:ui` (bench/ui.bench.ts → bench/ui-results.md): no test asserts milliseconds.
import { expect, test } from './fixtures';
import { fakeService } from '../test/doubles/service';

const REFS = 10_000;
const IMAGES = REFS / 2;

let fake: Awaited<ReturnType<typeof fakeService>> | undefined;
test.afterEach(async () => fake?.dispose());

test('10,000 references: windowed at every scroll position, every row reachable, sort and filters over all', async ({ holdfast }) => {
  test.setTimeout(120_000);
  // One node (the app opens it directly), answering at once: the UI is what is under test.
  fake = await fakeService({ manyRefs: REFS, latencyMs: 0 });
  const page = await holdfast.open({ handlers: fake.handlers });

  await expect(page.getByTestId('image-row').first()).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('images-summary')).toContainText('5000 images · 10000 references');
  // Only the rows near the viewport are in the DOM.
  expect(await page.getByTestId('image-row').count()).toBeLessThan(80);

  // At positions through the whole list (set directly: the wheel-through is the benchmark's),
  // the DOM keeps only a window of rows, and they are the rows of that position.
  const scroller = page.getByTestId('images-scroll');
  const height = await scroller.evaluate((el) => el.scrollHeight - el.clientHeight);
  let lastFirst = -1;
  for (let i = 1; i <= 20; i++) {
    await scroller.evaluate((el, top) => (el.scrollTop = top), Math.round((height * i) / 20));
    const first = page.getByTestId('image-row').first();
    await expect.poll(async () => Number(await first.getAttribute('data-index'))).toBeGreaterThan(lastFirst);
    lastFirst = Number(await first.getAttribute('data-index'));
    expect(await page.getByTestId('image-row').count()).toBeLessThan(120);
  }
  // The last image is on screen at the bottom.
  await expect(page.getByTestId('image-row').last()).toHaveAttribute('data-index', String(IMAGES - 1));
  await expect(page.getByTestId('image-row').last()).toBeInViewport();

  // While the list scrolls its rows take no pointer events (no hover moving from row to row in the
  // frames that scroll); once it rests they take them again.
  await scroller.evaluate((el) => {
    const w = window as unknown as { __scrolled: boolean };
    w.__scrolled = false;
    new MutationObserver(() => {
      if (el.hasAttribute('data-scrolling') && getComputedStyle(el.querySelector('[data-testid="image-row"]')!).pointerEvents === 'none') w.__scrolled = true;
    }).observe(el, { attributes: true, attributeFilter: ['data-scrolling'] });
  });
  const box = (await scroller.boundingBox())!;
  const [mx, my] = [box.x + box.width / 2, box.y + box.height / 2];
  await page.mouse.move(mx, my);
  await page.mouse.wheel(0, -800);
  await expect.poll(() => page.evaluate(() => (window as unknown as { __scrolled: boolean }).__scrolled)).toBe(true);
  await expect(scroller).not.toHaveAttribute('data-scrolling');
  expect(await page.evaluate(([x, y]) => document.elementFromPoint(x!, y!)?.closest('[data-testid="image-row"]') !== null, [mx, my])).toBe(true);

  // Sort by size (all 5,000 images), then a search term, then the "At risk" pin filter.
  await scroller.evaluate((el) => (el.scrollTop = 0));
  await page.locator('button.sort', { hasText: /^Size/ }).click();
  await expect(page.locator('th.col-size')).toHaveAttribute('aria-sort', 'descending');
  const search = page.getByTestId('image-search');
  await search.fill('service-4242');
  await expect(page.getByTestId('image-row')).toHaveCount(1);
  await search.fill('');
  await page.getByTestId('filter-atRisk').click();
  await expect(page.getByTestId('filter-atRisk')).toHaveAttribute('aria-pressed', 'true');
  await expect.poll(() => page.getByTestId('image-row').count()).toBeGreaterThan(5);
  await expect(page.locator('[data-testid="image-row"]:not([data-fate="lose"])')).toHaveCount(0);
});
