// Takes the screenshots of docs/screenshots/ from a real `boxoffice serve`: the customer's
// steps on a desktop (1440 × 900, NAME.png) and on a phone (390 × 844, phone-NAME.png), the
// seat map in French and German on a phone, the door and the admin pages:
// `node tests/browser/screenshots.js` after `make build` and `scripts/deps.sh browser`.
// (phone.test.js writes each phone state of its purchase to build/screenshots/phone/ too.)

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { customerPage, launch, startService, checkout } from './harness.js';

const out = resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots');
mkdirSync(out, { recursive: true });

const rows = [];
for (const r of 'ABCDEFGHIJKL') {
  const seats = r < 'C' ? 16 : 20;
  rows.push({
    row: r, seats, category: r < 'C' ? 'premium' : r > 'J' ? 'loveseat' : 'standard',
    aisles: seats === 16 ? [4, 12] : [5, 15], ...(r === 'C' ? { accessible: [1, 2, 19, 20] } : {}),
  });
}
const prices = {
  premium: { amount: 1800, currency: 'EUR' }, standard: { amount: 1250, currency: 'EUR' },
  loveseat: { amount: 2400, currency: 'EUR' },
};

const svc = await startService();
const browser = await launch();
try {
  // Tomorrow at 14:00, 17:30 and 20:45 London time, and the day after.
  const day = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
  const at = (hhmm, days = 0) => new Date(Date.parse(`${day}T${hhmm}:00Z`) + days * 86400000).toISOString().replace(/\.\d+Z$/, '.000Z');
  const london = { cinema: 'Odeon Leicester Square', timeZone: 'Europe/London' };
  const id = await svc.createShowtime(rows, prices, { title: 'Dune: Part Three', startsAt: at('20:45'), ...london });
  await svc.createShowtime(rows, prices, { title: 'Dune: Part Three', startsAt: at('17:30'), ...london, hall: 'Screen 2' });
  await svc.createShowtime(rows.slice(0, 6), prices, { title: 'Paddington in Peru', startsAt: at('14:00'), ...london });
  await svc.createShowtime(rows.slice(0, 6), prices, { title: 'Paddington in Peru', startsAt: at('16:15'), ...london });
  await svc.createShowtime(rows.slice(0, 8), prices, { title: 'Wicked: Part Two', startsAt: at('19:00'), cinema: 'Cineworld Glasgow', timeZone: 'Europe/London' });
  await svc.createShowtime(rows, prices, { title: 'Dune: Part Three', startsAt: at('20:45', 1), ...london });
  // Other customers' holds and a sale, so the map shows every state.
  const holdAs = async (customer, seats) => {
    const r = await fetch(`${svc.url}/showtimes/${id}/holds`, {
      method: 'POST', headers: { Authorization: `Bearer ${svc.token(customer)}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ seats }),
    });
    return r.json();
  };
  await holdAs(900, ['E9', 'E10', 'E11', 'E12']);
  await holdAs(901, ['G3', 'G4']);
  await holdAs(902, ['A7', 'A8', 'A9']);
  await holdAs(903, ['H15', 'H16', 'H17', 'H18']);

  const desktop = { viewport: { width: 1440, height: 900 } };
  const phone = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
  const shot = async (page, name) => page.screenshot({ path: `${out}/${name}.png` });

  for (const [size, prefix] of [[desktop, ''], [phone, 'phone-']]) {
    const list = await customerPage(browser, svc, 42, '/', size);
    await list.locator('.card').first().waitFor();
    await shot(list, `${prefix}showtimes`);
  }

  const page = await customerPage(browser, svc, 42, `/showtimes/${id}`, desktop);
  await page.locator('.live[data-live="up"]').waitFor();
  for (const c of ['F9', 'F10', 'F11']) await page.locator(`button.seat[data-code="${c}"]`).click();
  await page.locator('button.seat[data-code="F12"]').focus();
  await shot(page, 'seat-map');
  await page.getByRole('button', { name: 'Hold 3 seats' }).click();
  await page.getByRole('heading', { name: 'Your seats are held' }).waitFor();
  await page.getByRole('button', { name: 'Checkout' }).click();
  await page.getByLabel('E-mail for your tickets').fill('ana@example.com');
  await shot(page, 'order');
  await page.getByRole('button', { name: 'Back' }).click();
  await shot(page, 'hold');
  await checkout(page);
  await page.waitForURL((u) => u.href.startsWith(svc.gatewayUrl));
  await shot(page, 'gateway');
  await page.getByRole('button', { name: /^Pay/ }).click();
  await page.waitForFunction(() => document.querySelector('.booking-status .status')?.dataset.status === 'CONFIRMED');
  await page.waitForFunction(() => [...document.querySelectorAll('.ticket img')].some((i) => i.complete && i.naturalWidth > 0));
  await shot(page, 'booking');
  const ticket = page.locator('.ticket').first();
  await ticket.scrollIntoViewIfNeeded();
  await ticket.screenshot({ path: `${out}/ticket.png` });
  const codes = await page.locator('.ticket-code').allTextContents();

  // The door: the first ticket admitted, then scanned again and refused.
  const door = await browser.newPage(desktop);
  await door.goto(`${svc.url}/door#token=${svc.token(900, false, true)}`);
  await door.locator(`a[href="#${id}"]`).click();
  const field = door.getByLabel('Ticket code');
  await field.waitFor();
  for (const c of [codes[1], codes[0], codes[0]]) {
    await field.pressSequentially(c);
    await field.press('Enter');
  }
  await door.waitForFunction(() => document.querySelectorAll('#recent li').length === 3);
  await door.waitForFunction(() => /2 admitted of 3 sold/.test(document.getElementById('count').textContent));
  await shot(door, 'door-refused');
  await field.pressSequentially(codes[2]);
  await field.press('Enter');
  await door.waitForFunction(() => document.querySelectorAll('#recent li').length === 4);
  await shot(door, 'door-admitted');

  // The phone: two seats chosen (the sheet one line), the sheet open, zoomed in, the order,
  // held, the booking; the seat map in French and German.
  const mobile = await customerPage(browser, svc, 43, `/showtimes/${id}`, phone);
  await mobile.locator('.live[data-live="up"]').waitFor();
  await mobile.locator('button.seat[data-code="H10"]').tap();
  await mobile.locator('button.seat[data-code="H11"]').tap();
  await shot(mobile, 'phone-seat-map');
  await mobile.locator('.sheet-toggle').tap();
  await shot(mobile, 'phone-sheet-open');
  await mobile.locator('.sheet-toggle').tap();
  await mobile.getByRole('button', { name: 'Zoom in' }).tap();
  await mobile.getByRole('button', { name: 'Zoom in' }).tap();
  await shot(mobile, 'phone-zoomed');
  await mobile.getByRole('button', { name: 'Hold 2 seats' }).tap();
  await mobile.locator('.sheet-countdown').waitFor();
  await shot(mobile, 'phone-hold');
  await mobile.getByRole('button', { name: 'Checkout' }).tap();
  await mobile.getByLabel('E-mail for your tickets').fill('ana@example.com');
  await shot(mobile, 'phone-order');
  await mobile.locator('.order button[type="submit"]').tap();
  await mobile.waitForURL((u) => u.href.startsWith(svc.gatewayUrl));
  await mobile.getByRole('button', { name: /^Pay/ }).tap();
  await mobile.waitForFunction(() => document.querySelector('.booking-status .status')?.dataset.status === 'CONFIRMED');
  await mobile.waitForFunction(() => [...document.querySelectorAll('.ticket img')].some((i) => i.complete && i.naturalWidth > 0));
  await shot(mobile, 'phone-booking');
  for (const [locale, name] of [['fr-FR', 'phone-seat-map-fr'], ['de-DE', 'phone-seat-map-de']]) {
    const other = await customerPage(browser, svc, 44, `/showtimes/${id}`, { ...phone, locale });
    await other.locator('.live[data-live="up"]').waitFor();
    await other.locator('button.seat[data-code="J10"]').tap();
    await other.locator('button.seat[data-code="J11"]').tap();
    await other.locator('.sheet-toggle').tap();
    await shot(other, name);
  }

  const admin = await browser.newPage(desktop);
  await admin.goto(`${svc.url}/#/admin?token=${svc.token(1, true)}`);
  await admin.getByRole('heading', { name: 'Admin' }).waitFor();
  await shot(admin, 'admin');

  // A showtime's admin page: its sales and chart, edit, cancel; then cancelled, its refunds.
  const tall = { viewport: { width: 1440, height: 1400 } };
  const manage = await browser.newPage(tall);
  await manage.goto(`${svc.url}/#/admin/showtimes/${id}?token=${svc.token(1, true)}`);
  await manage.getByRole('heading', { name: 'Sales' }).waitFor();
  await shot(manage, 'admin-showtime');
  await manage.getByLabel('Reason (for the trail)').fill('Projector broken');
  await manage.getByRole('button', { name: 'Cancel showtime…' }).click();
  await shot(manage, 'admin-showtime-confirm');
  await manage.getByRole('button', { name: 'Yes, cancel and refund' }).click();
  await manage.locator('[data-figure="refunds"]').filter({ hasText: /All \d+ issued/ }).waitFor();
  await shot(manage, 'admin-showtime-cancelled');
  console.log(`screenshots in ${out}`);
} finally {
  await browser.close();
  await svc.stop();
}
