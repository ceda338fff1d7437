// The seat picker shows money in the currency's own units and times on the cinema's clock,
// never offers what can no longer be sold, and draws nothing it did not mean to:
// - no text "null" (or "undefined", "NaN") anywhere on the list, the seat map chosen, held
//   and in payment, or the booking page;
// - minor units as Intl says (JPY 0 digits, EUR 2, KWD 3): 1800 typed for JPY on the admin
//   page is 1800 in the API and ¥1,800 on the map; typed decimals are read from their digits;
// - a showtime's times in its timeZone, with the zone's short name, whatever the browser's
//   own zone (a Tokyo showtime in a browser in New York);
// - the admin page turns a wall time in the cinema's zone into the UTC startsAt, across the
//   changes of the clocks (Europe/Berlin's skipped and repeated hours), sends "timeZone",
//   and refuses a start in the past itself, or shows the service's refusal;
// - a showtime whose sales have closed is listed without a link, its map offers no hold,
//   and a 409 SALES_CLOSED to a hold or a checkout is said plainly.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { customerPage, done, launch, startService, watch, checkout } from './harness.js';

const STEP_MS = 15000;
const smallHall = [
  { row: 'A', seats: 10, category: 'standard', aisles: [5] },
  { row: 'B', seats: 10, category: 'standard', aisles: [5] },
];
const prices = { standard: { amount: 1250, currency: 'EUR' } };
// Formats are asserted in US English; the page follows the reader's English (format.js).
const US = { locale: 'en-US' };
const NEXT_YEAR = new Date().getUTCFullYear() + 1;

const seat = (page, code) => page.locator(`button.seat[data-code="${code}"]`);
const heldPanel = (page) => page.getByRole('heading', { name: 'Your seats are held' });
// Text as a reader sees it: Intl puts narrow no-break spaces in times ("07:30 PM").
const text = async (locator) => (await locator.textContent()).replace(/\s+/g, ' ');

async function hold(page, codes) {
  for (const c of codes) await seat(page, c).click();
  await page.getByRole('button', { name: /^Hold \d seats?$/ }).click();
}
async function bookingStatus(page, status) {
  await page.waitForFunction((s) => document.querySelector('.booking-status .status')?.dataset.status === s,
    status, { timeout: STEP_MS });
}
// Text nodes and labels that show a value the page never meant to draw.
function strays(page) {
  return page.evaluate(() => {
    const bad = /\b(null|undefined|NaN)\b/;
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) if (bad.test(n.textContent)) out.push(n.textContent);
    for (const e of document.querySelectorAll('[aria-label], [title]')) {
      for (const a of ['aria-label', 'title']) if (bad.test(e.getAttribute(a) || '')) out.push(`${a}=${e.getAttribute(a)}`);
    }
    return out;
  });
}
// The page's pure functions are called in the page, on its own modules (their versioned
// URL, the browser's Intl): each evaluate below imports one with
//   await import(new URL('timezone.js', document.querySelector('script[type="module"]').src))
// (the page's Content-Security-Policy allows no eval, so the import is written out each time).
async function adminPage(browser, svc, { clockOffsetMs = 0, ...options } = {}) {
  const context = await browser.newContext({ ...US, ...options });
  if (clockOffsetMs) await context.clock.setSystemTime(new Date(Date.now() + clockOffsetMs));
  const page = watch(await context.newPage());
  await page.goto(`${svc.url}/#/admin?token=${svc.token(1, true)}`);
  await page.getByRole('heading', { name: 'Admin' }).waitFor({ timeout: STEP_MS });
  return page;
}
// The body of the next POST /admin/showtimes the page sends, after act().
async function createBody(page, act) {
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/admin/showtimes', { timeout: STEP_MS }),
    act(),
  ]);
  return request.postDataJSON();
}

describe('money, times and sales close in the seat picker', () => {
  let svc;
  let browser;
  before(async () => { svc = await startService(); browser = await launch(); });
  after(async () => { await browser?.close(); await svc?.stop(); });

  test('no stray "null": the list, the seat map chosen, held and in payment, the booking page', async () => {
    const id = await svc.createShowtime(smallHall, prices);
    const page = await customerPage(browser, svc, 1301, '/');
    await page.locator('.card').first().waitFor({ timeout: STEP_MS });
    assert.deepEqual(await strays(page), [], 'showtime list');
    await page.goto(`${svc.url}/#/showtimes/${id}`);
    await page.getByRole('button', { name: 'Hold seats' }).waitFor({ timeout: STEP_MS });
    assert.deepEqual(await strays(page), [], 'seat map');
    await seat(page, 'A1').click();
    await page.getByRole('button', { name: 'Hold 1 seat' }).click();
    await heldPanel(page).waitFor({ timeout: STEP_MS });
    assert.deepEqual(await strays(page), [], 'a hold');
    await checkout(page);
    await page.waitForURL((u) => u.href.startsWith(`${svc.gatewayUrl}/pay/`), { timeout: STEP_MS });
    await page.goto(`${svc.url}/#/showtimes/${id}`);
    await page.getByRole('button', { name: 'Continue to payment' }).waitFor({ timeout: STEP_MS });
    assert.deepEqual(await strays(page), [], 'a payment open');
    // The booking page in a tab that did not pay (no payment link kept): same customer.
    const bookingId = await page.evaluate(() => Object.keys(sessionStorage).find((k) => k.startsWith('boxoffice.booking.')).split('.').pop());
    const other = await customerPage(browser, svc, 1301, `/bookings/${bookingId}`);
    await bookingStatus(other, 'PENDING');
    await other.getByText('Waiting for the payment to be confirmed').waitFor({ timeout: STEP_MS });
    assert.deepEqual(await strays(other), [], 'booking page');
    await done(page, other);
  });

  test('minor units: Intl\'s digits per currency, typed decimals read exactly, amounts shown in their currency', async () => {
    const page = await customerPage(browser, svc, 1302, '/', US);
    const read = await page.evaluate(async (cases) => {
      const m = await import(new URL('admin.js', document.querySelector('script[type="module"]').src));
      return cases.map(([prices, currency]) => { try { return m.parsePrices(prices, currency); } catch (e) { return e.message; } });
    }, [
      ['standard 1800', 'JPY'], ['standard 12.50, premium 18', 'EUR'], ['standard 0.29', 'EUR'],
      ['standard 4.35', 'EUR'], ['standard 1.005', 'KWD'], ['standard 12.345', 'BHD'], ['standard 18.00', 'EUR'],
      ['standard 1800.00', 'JPY'], ['standard 1800.5', 'JPY'], ['standard 12.345', 'EUR'], ['standard 12.5.0', 'EUR'],
      ['standard 12', 'XYZ'],
    ]);
    assert.deepEqual(read, [
      { standard: { amount: 1800, currency: 'JPY' } },
      { standard: { amount: 1250, currency: 'EUR' }, premium: { amount: 1800, currency: 'EUR' } },
      { standard: { amount: 29, currency: 'EUR' } },
      { standard: { amount: 435, currency: 'EUR' } },
      { standard: { amount: 1005, currency: 'KWD' } },
      { standard: { amount: 12345, currency: 'BHD' } },
      { standard: { amount: 1800, currency: 'EUR' } },
      { standard: { amount: 1800, currency: 'JPY' } },
      'Cannot read the price "standard 1800.5": JPY has no minor unit: write "1800.5" without decimals.',
      'Cannot read the price "standard 12.345": EUR has 2 decimals: "12.345" has more.',
      'Cannot read the price "standard 12.5.0": "12.5.0" is not an amount: write it as 12.50 (digits and a point).',
      'Unknown currency "XYZ": write its three-letter code, such as EUR or JPY.',
    ]);
    const shown = await page.evaluate(async (amounts) => {
      const m = await import(new URL('format.js', document.querySelector('script[type="module"]').src));
      return amounts.map((a) => m.money(a));
    }, [
      { amount: 1800, currency: 'JPY' }, { amount: 1250, currency: 'EUR' }, { amount: 12345, currency: 'KWD' },
      { amount: 5, currency: 'GBP' }, { amount: 10000000, currency: 'EUR' },
    ]);
    assert.deepEqual(shown.map((s) => s.replace(/\s+/g, ' ')), ['¥1,800', '€12.50', 'KWD 12.345', '£0.05', '€100,000.00']);
    await done(page);
  });

  test('a JPY showtime made on the admin page at 1800: 1800 in the API, ¥1,800 on the map', async () => {
    const page = await adminPage(browser, svc);
    await page.getByLabel('Title').fill('Yen Night');
    await page.getByLabel('Time zone').fill('Asia/Tokyo');
    await page.getByLabel('Starts at').fill(`${NEXT_YEAR}-12-18T19:30`);
    await page.getByLabel('Rows').fill('A 10 standard\nB 10 premium');
    await page.getByLabel('Currency').fill('JPY');
    // A decimal the yen does not have is refused on the page, before any request.
    await page.getByLabel('Prices', { exact: true }).fill('standard 1800, premium 2500.5');
    await page.getByRole('button', { name: 'Create showtime' }).click();
    await page.getByText('JPY has no minor unit').waitFor({ timeout: STEP_MS });
    await page.getByLabel('Prices', { exact: true }).fill('standard 1800, premium 2500');
    const body = await createBody(page, () => page.getByRole('button', { name: 'Create showtime' }).click());
    assert.deepEqual(body.prices, { standard: { amount: 1800, currency: 'JPY' }, premium: { amount: 2500, currency: 'JPY' } });
    assert.equal(body.startsAt, `${NEXT_YEAR}-12-18T10:30:00.000Z`);
    assert.equal(body.timeZone, 'Asia/Tokyo');
    const link = page.locator('.result a');
    await link.waitFor({ timeout: STEP_MS });
    const id = Number((await link.textContent()).replace('#', ''));
    const showtime = await (await fetch(`${svc.url}/showtimes/${id}`)).json();
    assert.deepEqual(showtime.prices, body.prices);
    assert.equal(showtime.startsAt, body.startsAt);
    assert.equal(showtime.timeZone, 'Asia/Tokyo');

    await link.click();
    await seat(page, 'A1').waitFor({ timeout: STEP_MS });
    assert.equal(await seat(page, 'A1').getAttribute('aria-label'), 'Row A, seat 1, standard, ¥1,800, available');
    assert.match(await text(page.locator('.legend')), /standard: ¥1,800/);
    assert.match(await text(page.locator('.legend')), /premium: ¥2,500/);
    await seat(page, 'A1').click();
    await seat(page, 'B1').click();
    assert.match(await text(page.locator('.panel')), /A1, B1 · ¥4,300/);
    await done(page);
  });

  test('a Tokyo showtime in a browser in New York: its start on Tokyo\'s clock on the list, the map and the booking', async () => {
    const cinema = 'Shinjuku Test Cinema';
    const startsAt = `${NEXT_YEAR}-12-18T10:30:00.000Z`;  // 19:30 in Tokyo, 05:30 in New York
    const id = await svc.createShowtime(smallHall, prices, { cinema, startsAt, timeZone: 'Asia/Tokyo' });
    const tokyo = /Dec 18, 07:30 PM GMT\+9/;
    const page = await customerPage(browser, svc, 1303, `/?cinema=${encodeURIComponent(cinema)}`, { ...US, timezoneId: 'America/New_York' });
    const card = page.locator(`.card[data-showtime="${id}"]`);
    await card.waitFor({ timeout: STEP_MS });
    // The list: the day and the time on Tokyo's clock.
    assert.match(await text(card.locator('time')), /^07:30 PM GMT\+9$/);
    assert.match(await text(page.locator('.day', { has: card }).locator('h2')), /^[A-Z][a-z]+day, December 18$/);
    assert.equal(await card.locator('time').getAttribute('datetime'), startsAt);
    await card.getByRole('link').click();
    await seat(page, 'A1').waitFor({ timeout: STEP_MS });
    assert.match(await text(page.locator('.sub time')), tokyo);
    assert.doesNotMatch(await text(page.locator('.sub time')), /05:30/);
    await hold(page, ['A2']);
    await heldPanel(page).waitFor({ timeout: STEP_MS });
    await checkout(page);
    await page.waitForURL((u) => u.href.startsWith(`${svc.gatewayUrl}/pay/`), { timeout: STEP_MS });
    await page.getByRole('button', { name: 'Pay 12.50 EUR' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${svc.url}/#/bookings/`), { timeout: STEP_MS });
    await page.locator('.sub time').waitFor({ timeout: STEP_MS });
    assert.match(await text(page.locator('.sub time')), tokyo);
    // A showtime without a timeZone is on UTC's clock, said so.
    const plain = await svc.createShowtime(smallHall, prices, { startsAt });
    await page.goto(`${svc.url}/#/showtimes/${plain}`);
    await seat(page, 'A1').waitFor({ timeout: STEP_MS });
    assert.match(await text(page.locator('.sub time')), /Dec 18, 10:30 AM UTC/);
    await done(page);
  });

  test('wall time in a zone to UTC: ordinary days, Europe/Berlin\'s skipped and repeated hours, other zones', async () => {
    const page = await customerPage(browser, svc, 1304, '/', US);
    const cases = [
      // [wall time, zone, UTC instant]
      ['2026-07-01T20:00', 'Europe/Berlin', '2026-07-01T18:00:00.000Z'],      // summer, CEST +2
      ['2026-01-15T20:00', 'Europe/Berlin', '2026-01-15T19:00:00.000Z'],      // winter, CET +1
      ['2026-03-29T01:59', 'Europe/Berlin', '2026-03-29T00:59:00.000Z'],      // the last minute before the change
      ['2026-03-29T02:30', 'Europe/Berlin', '2026-03-29T01:30:00.000Z'],      // skipped: moved forward, 03:30 CEST
      ['2026-03-29T03:00', 'Europe/Berlin', '2026-03-29T01:00:00.000Z'],      // the first minute after
      ['2026-10-25T01:59', 'Europe/Berlin', '2026-10-24T23:59:00.000Z'],
      ['2026-10-25T02:30', 'Europe/Berlin', '2026-10-25T00:30:00.000Z'],      // repeated: the first, CEST
      ['2026-10-25T03:00', 'Europe/Berlin', '2026-10-25T02:00:00.000Z'],
      ['2026-03-08T02:30', 'America/New_York', '2026-03-08T07:30:00.000Z'],   // skipped: 03:30 EDT
      ['2026-11-01T01:30', 'America/New_York', '2026-11-01T05:30:00.000Z'],   // repeated: the first, EDT
      ['2026-12-18T19:30', 'Asia/Tokyo', '2026-12-18T10:30:00.000Z'],
      ['2026-04-05T01:45', 'Australia/Lord_Howe', '2026-04-04T14:45:00.000Z'], // a half-hour change, repeated
      ['2026-06-01T00:00', 'UTC', '2026-06-01T00:00:00.000Z'],
      ['2026-02-30T10:00', 'UTC', 'NaN'],                                     // not a day
      ['18/12/2026 19:30', 'UTC', 'NaN'],
    ];
    const got = await page.evaluate(async (list) => {
      const m = await import(new URL('timezone.js', document.querySelector('script[type="module"]').src));
      return list.map(([wall, zone]) => {
        const t = m.wallTimeToUtc(wall, zone);
        return Number.isNaN(t) ? 'NaN' : new Date(t).toISOString();
      });
    }, cases);
    assert.deepEqual(got, cases.map((c) => c[2]));
    // And back: the wall time at an instant, the inverse away from a change.
    const back = await page.evaluate(async () => {
      const m = await import(new URL('timezone.js', document.querySelector('script[type="module"]').src));
      return [
        m.wallTimeAt(Date.parse('2026-07-01T18:00:00Z'), 'Europe/Berlin'),
        m.wallTimeAt(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Berlin'),  // the repeated hour's second 02:30
        m.offsetAt('Asia/Kolkata', Date.parse('2026-01-01T00:00:00Z')),
      ];
    });
    assert.deepEqual(back, ['2026-07-01T20:00', '2026-10-25T02:30', 19800000]);
    await done(page);
  });

  test('admin page: the start in the cinema\'s zone becomes UTC and the zone is sent; a start in the past is refused', async () => {
    const page = await adminPage(browser, svc, { timezoneId: 'Europe/Berlin' });
    // The zone's first guess is the browser's.
    assert.equal(await page.getByLabel('Time zone').inputValue(), 'Europe/Berlin');
    await page.getByLabel('Title').fill('Berlin Summer');
    await page.getByLabel('Starts at').fill(`${NEXT_YEAR}-07-01T20:00`);
    assert.equal(await page.locator('#start-preview').getAttribute('data-utc'), `${NEXT_YEAR}-07-01T18:00:00.000Z`);
    let body = await createBody(page, () => page.getByRole('button', { name: 'Create showtime' }).click());
    assert.equal(body.startsAt, `${NEXT_YEAR}-07-01T18:00:00.000Z`);
    assert.equal(body.timeZone, 'Europe/Berlin');
    await page.locator('.result a').waitFor({ timeout: STEP_MS });
    // Another zone, typed in any case, is sent as Intl spells it.
    await page.getByLabel('Time zone').fill('europe/london');
    body = await createBody(page, () => page.getByRole('button', { name: 'Create showtime' }).click());
    assert.equal(body.startsAt, `${NEXT_YEAR}-07-01T19:00:00.000Z`);
    assert.equal(body.timeZone, 'Europe/London');

    // A start in the past, or an unknown zone: refused on the page, nothing sent.
    let posts = 0;
    page.on('request', (r) => { if (r.method() === 'POST' && new URL(r.url()).pathname === '/admin/showtimes') posts++; });
    await page.getByLabel('Starts at').fill('2020-01-01T20:00');
    await page.getByRole('button', { name: 'Create showtime' }).click();
    await page.getByText(/is in the past: a showtime must start later than now/).waitFor({ timeout: STEP_MS });
    await page.getByLabel('Starts at').fill(`${NEXT_YEAR}-07-01T20:00`);
    await page.getByLabel('Time zone').fill('Mars/Olympus');
    await page.getByRole('button', { name: 'Create showtime' }).click();
    await page.getByText('Unknown time zone "Mars/Olympus"').waitFor({ timeout: STEP_MS });
    assert.equal(posts, 0);
    await done(page);

    // The service decides with its own clock: a page whose clock is an hour slow sends a start
    // half an hour ago, and shows the service's VALIDATION_FAILED message.
    const slow = await adminPage(browser, svc, { timezoneId: 'UTC', clockOffsetMs: -3600000 });
    await slow.getByLabel('Time zone').fill('UTC');
    await slow.getByLabel('Starts at').fill(new Date(Date.now() - 30 * 60000).toISOString().slice(0, 16));
    await slow.getByRole('button', { name: 'Create showtime' }).click();
    await slow.waitForFunction(() => /^Not accepted: \S/.test(document.getElementById('message').textContent), null, { timeout: STEP_MS });
    assert.equal(await slow.locator('.result a').count(), 0);
    await done(slow);
  });

  test('sales closed: a started showtime is listed without a link and its map holds nothing; SALES_CLOSED is said plainly', async () => {
    const cinema = 'Closing Time Cinema';
    const soon = new Date(Date.now() + 4000).toISOString();  // in the future when it is created
    const started = await svc.createShowtime(smallHall, prices, { cinema, startsAt: soon });
    const open = await svc.createShowtime(smallHall, prices, { cinema });
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(soon) + 500 - Date.now())));
    // The day's list (a `from`, so the service lists the started one too) shows it closed.
    const page = await customerPage(browser, svc, 1305, `/?cinema=${encodeURIComponent(cinema)}&date=${soon.slice(0, 10)}`,
      { ...US, timezoneId: 'UTC' });
    const card = page.locator(`.card[data-showtime="${started}"]`);
    await card.waitFor({ timeout: STEP_MS });
    assert.equal(await card.getByRole('link').count(), 0);
    assert.match(await text(card), /Sales closed/);
    // The default list offers no way to it.
    await page.goto(`${svc.url}/#/?cinema=${encodeURIComponent(cinema)}`);
    await page.locator(`.card[data-showtime="${open}"] a`).waitFor({ timeout: STEP_MS });
    assert.equal(await page.locator(`.card[data-showtime="${started}"] a`).count(), 0);
    // Its map, opened by its address: seats to look at, none to hold.
    await page.goto(`${svc.url}/#/showtimes/${started}`);
    await page.getByRole('heading', { name: 'Sales closed' }).waitFor({ timeout: STEP_MS });
    assert.equal(await page.getByRole('button', { name: /^Hold|Best available/ }).count(), 0);
    await seat(page, 'A1').click();
    assert.equal(await page.locator('#message').textContent(), 'Sales for this showtime have closed.');
    assert.equal(await seat(page, 'A1').getAttribute('aria-pressed'), 'false');
    const refused = await fetch(`${svc.url}/showtimes/${started}/holds`, {
      method: 'POST', headers: { Authorization: `Bearer ${svc.token(1306)}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ seats: ['A1'] }),
    });
    assert.equal(refused.status, 409);
    assert.equal((await refused.json()).code, 'SALES_CLOSED');

    // The service's word wins over the page's clock: a hold answered SALES_CLOSED (played
    // here by the test on a showtime still on sale) is said plainly and ends the choosing.
    const closedAnswer = (route) => route.fulfill({
      status: 409, contentType: 'application/json',
      body: JSON.stringify({ error: `Sales of showtime ${open} have closed`, code: 'SALES_CLOSED' }),
    });
    await page.route('**/showtimes/*/holds', closedAnswer);
    await page.goto(`${svc.url}/#/showtimes/${open}`);
    await hold(page, ['A1']);
    await page.getByRole('heading', { name: 'Sales closed' }).waitFor({ timeout: STEP_MS });
    assert.equal(await page.locator('#message').textContent(), 'Sales for this showtime have closed.');
    await page.unroute('**/showtimes/*/holds', closedAnswer);
    // And so is a checkout answered SALES_CLOSED: the hold stays, only to be released.
    await page.route('**/holds/*/checkout', closedAnswer);
    await page.reload();
    await hold(page, ['A2']);
    await heldPanel(page).waitFor({ timeout: STEP_MS });
    await checkout(page);
    await page.getByText('These seats can no longer be paid for.').waitFor({ timeout: STEP_MS });
    assert.equal(await page.locator('#message').textContent(), 'Sales for this showtime have closed.');
    assert.equal(await page.getByRole('button', { name: /Checkout|Continue to payment/ }).count(), 0);
    await page.getByRole('button', { name: 'Release seats' }).click();
    await page.getByText('Seat A2 released.').waitFor({ timeout: STEP_MS });
    await done(page);
  });
});
