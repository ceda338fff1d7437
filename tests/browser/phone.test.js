// The seat picker on a phone (390 × 844, touch), as customers use it: the whole purchase by
// taps; the hall zoomed with the buttons and with two fingers, its seats 44 px and more when
// zoomed in; the hall saying it goes on beyond the screen; the bottom sheet one line high,
// opened and closed, never hiding the seat in question; a message over the page that moves
// no seat; axe with nothing serious in each state. Each state's screenshot is written to
// build/screenshots/phone/ (BOXOFFICE_SCREENSHOTS elsewhere).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { customerPage, done, launch, seriousViolations, startService } from './harness.js';

const STEP_MS = 15000;
const TOUCH_PX = 44;  // the smallest target a finger hits reliably (WCAG 2.5.5, platform guides)
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-GB' };
const SHOTS = process.env.BOXOFFICE_SCREENSHOTS || resolve(dirname(fileURLToPath(import.meta.url)), '../../build/screenshots/phone');

const seat = (page, code) => page.locator(`button.seat[data-code="${code}"]`);

// Where a seat is against the screen and the bottom sheet.
function placeOf(page, code) {
  return page.evaluate((c) => {
    const r = document.querySelector(`button.seat[data-code="${c}"]`).getBoundingClientRect();
    const sheet = document.querySelector('.panel').getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, sheetTop: sheet.top, sheetHeight: sheet.height };
  }, code);
}
async function inSight(page, code, what) {
  const p = await placeOf(page, code);
  assert.ok(p.top >= 0 && p.bottom <= p.sheetTop && p.left >= 0 && p.right <= 390, `${what}: ${code} at ${JSON.stringify(p)}`);
}
const seatWidth = (page) => page.evaluate(() => document.querySelector('button.seat').getBoundingClientRect().width);

// Two fingers on the hall moving apart by `spread` px each (Chromium's touch input).
async function pinch(page, spread) {
  const box = await page.locator('.hall-scroll').boundingBox();
  const [x, y] = [box.x + box.width / 2, box.y + Math.min(box.height / 2, 200)];
  const cdp = await page.context().newCDPSession(page);
  const points = (d) => [{ x: x - 40 - d, y, id: 1 }, { x: x + 40 + d, y, id: 2 }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: points(0) });
  for (let d = 10; d <= spread; d += 10) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: points(d) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

describe('the seat picker on a phone', () => {
  let svc;
  let browser;
  before(async () => { svc = await startService(); browser = await launch(); mkdirSync(SHOTS, { recursive: true }); });
  after(async () => { await browser?.close(); await svc?.stop(); });

  test('the whole purchase by taps at 390 × 844: zoom, pinch, the sheet, messages over the page, axe', async () => {
    const rows = [];
    for (const r of 'ABCDEFGHIJKL') rows.push({ row: r, seats: 20, category: r < 'C' ? 'premium' : 'standard', aisles: [5, 15] });
    const id = await svc.createShowtime(rows, { premium: { amount: 1800, currency: 'EUR' }, standard: { amount: 1250, currency: 'EUR' } },
      { title: 'Dune: Part Three' });
    await svc.holdAs(2001, id, ['L9']);
    const page = await customerPage(browser, svc, 2000, '/', PHONE);
    const shot = (name) => page.screenshot({ path: `${SHOTS}/${name}.png` });
    await page.locator('.card a').first().waitFor({ timeout: STEP_MS });
    await shot('showtimes');
    await page.locator('.film', { hasText: 'Dune: Part Three' }).locator('.card a').first().tap();
    await seat(page, 'L10').waitFor({ timeout: STEP_MS });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'the page never scrolls sideways');

    // A hall wider than the phone says so: a shade at the edges and a hint.
    assert.equal(await page.locator('.map-hint').isVisible(), true);
    assert.ok(await page.evaluate(() => { const s = document.querySelector('.hall-scroll'); return s.dataset.left === 'true' || s.dataset.right === 'true'; }));

    // The sheet is one line: what is chosen and the action, side by side.
    await seat(page, 'L10').tap();
    await seat(page, 'L11').tap();
    await inSight(page, 'L11', 'a seat just picked');
    const line = await page.evaluate(() => {
      const toggle = document.querySelector('.sheet-toggle').getBoundingClientRect();
      const action = document.querySelector('.panel .actions .primary').getBoundingClientRect();
      return { sheet: document.querySelector('.panel').getBoundingClientRect().height, toggle: toggle.top, action: action.top, actionHeight: action.height };
    });
    assert.ok(line.sheet <= 2 * TOUCH_PX, `the closed sheet is ${line.sheet} px high`);
    assert.ok(Math.abs(line.toggle - line.action) < line.actionHeight, 'summary and action on one line');
    assert.match(await page.locator('.sheet-toggle').textContent(), /2 seats · €25\.00/);
    assert.deepEqual(await seriousViolations(page), [], 'axe: two seats chosen');
    await shot('seat-map');

    // Opened, the sheet shows the whole panel and the chosen seats stay in sight above it.
    await page.locator('.sheet-toggle').tap();
    assert.equal(await page.locator('.sheet-toggle').getAttribute('aria-expanded'), 'true');
    await page.getByRole('button', { name: 'Best available' }).waitFor();
    await inSight(page, 'L11', 'the sheet opened');
    await shot('sheet-open');
    await page.locator('.sheet-toggle').tap();
    assert.equal(await page.locator('.sheet-toggle').getAttribute('aria-expanded'), 'false');

    // A message lies over the page: the hall does not move.
    const before = await placeOf(page, 'L10');
    await seat(page, 'L9').tap({ force: true });  // held by someone else (aria-disabled)
    await page.locator('#message').getByText('Seat L9 is taken. Choose another one.').waitFor({ timeout: STEP_MS });
    const after = await placeOf(page, 'L10');
    assert.equal(after.top, before.top, 'a message moved the seats');
    await page.locator('.message-close').tap();
    assert.equal(await page.locator('#message').isVisible(), false);

    // Zoomed in with the button, seats are a finger wide; out again; two fingers zoom too.
    const fitted = await seatWidth(page);
    for (let i = 0; i < 5 && await seatWidth(page) < TOUCH_PX; i++) await page.getByRole('button', { name: 'Zoom in' }).tap();
    assert.ok(await seatWidth(page) >= TOUCH_PX, `zoomed in, seats are ${await seatWidth(page)} px`);
    await shot('zoomed');
    for (let i = 0; i < 5; i++) await page.getByRole('button', { name: 'Zoom out' }).tap();
    const out = await seatWidth(page);
    assert.ok(out < fitted, `zoomed out, seats are ${out} px (from ${fitted})`);
    await pinch(page, 120);
    const pinched = await seatWidth(page);
    assert.ok(pinched > out * 1.5, `two fingers apart: seats from ${out} px to ${pinched} px`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'zoomed, the page still never scrolls sideways');

    // Hold from the sheet's line, pay, and the booking.
    await page.getByRole('button', { name: 'Hold 2 seats' }).tap();
    await page.locator('.sheet-countdown').waitFor({ timeout: STEP_MS });
    assert.match(await page.locator('.sheet-toggle').textContent(), /2 seats held · \d+:\d\d/);
    assert.equal(await seat(page, 'L10').getAttribute('data-state'), 'mine');
    assert.deepEqual(await seriousViolations(page), [], 'axe: seats held');
    await shot('hold');
    // The order before payment: each seat and its price, the total, the e-mail.
    await page.getByRole('button', { name: 'Checkout' }).tap();
    const order = (await page.locator('.order').innerText()).replace(/\s+/g, ' ');
    assert.match(order, /Row L, seat 10 · standard €12\.50 Row L, seat 11 · standard €12\.50 Total €25\.00/);
    await page.getByLabel('E-mail for your tickets').fill('not an address');
    await page.getByRole('button', { name: 'Pay €25.00' }).tap();
    await page.locator('#message').getByText(/Write the e-mail address your tickets go to/).waitFor({ timeout: STEP_MS });
    assert.equal(await page.evaluate(() => location.hash.startsWith('#/showtimes/')), true, 'nothing was paid');
    await page.getByLabel('E-mail for your tickets').fill('ana@example.com');
    await inSight(page, 'L11', 'the order before payment');
    assert.deepEqual(await seriousViolations(page), [], 'axe: the order before payment');
    await shot('order');
    const sent = page.waitForRequest((r) => r.method() === 'POST' && /\/holds\/[^/]+\/checkout$/.test(new URL(r.url()).pathname));
    await page.getByRole('button', { name: 'Pay €25.00' }).tap();
    assert.deepEqual((await sent).postDataJSON(), { email: 'ana@example.com' }, 'the e-mail goes in the checkout body');
    await page.waitForURL((u) => u.href.startsWith(`${svc.gatewayUrl}/pay/`), { timeout: STEP_MS });
    await page.getByRole('button', { name: /^Pay / }).tap();
    await page.waitForURL((u) => u.href.startsWith(`${svc.url}/#/bookings/`), { timeout: STEP_MS });
    await page.waitForFunction(() => document.querySelector('.booking-status .status')?.dataset.status === 'CONFIRMED', null, { timeout: STEP_MS });
    await page.locator('.ticket').first().waitFor({ timeout: STEP_MS });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'the booking page never scrolls sideways');
    assert.deepEqual(await seriousViolations(page), [], 'axe: the booking');
    await shot('booking');
    await done(page);
  });
});
