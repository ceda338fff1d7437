// Takes the screenshots of docs/screenshots/ (the seat picker's main steps on a desktop and a
// phone) from a real `boxoffice serve`: `node tests/browser/screenshots.js` after `make build`
// and `scripts/deps.sh browser`.

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
  const id = await svc.createShowtime(rows, prices, { title: 'Dune: Part Three', cinema: 'Odeon Leicester Square' });
  await svc.createShowtime(rows.slice(0, 6), prices, { title: 'Paddington in Peru', cinema: 'Odeon Leicester Square' });
  await svc.createShowtime(rows.slice(0, 8), prices, { title: 'Wicked: Part Two', cinema: 'Cineworld Glasgow' });
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
  const phone = { viewport: { width: 360, height: 760 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
  const shot = async (page, name) => page.screenshot({ path: `${out}/${name}.png` });

  const list = await customerPage(browser, svc, 42, '/', desktop);
  await list.locator('.card').first().waitFor();
  await shot(list, 'showtimes');

  const page = await customerPage(browser, svc, 42, `/showtimes/${id}`, desktop);
  await page.locator('.live[data-live="up"]').waitFor();
  for (const c of ['F9', 'F10', 'F11']) await page.locator(`button.seat[data-code="${c}"]`).click();
  await page.locator('button.seat[data-code="F12"]').focus();
  await shot(page, 'seat-map');
  await page.getByRole('button', { name: 'Hold 3 seats' }).click();
  await page.getByRole('heading', { name: 'Your seats are held' }).waitFor();
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
  await door.getByRole('link', { name: 'Dune: Part Three' }).click();
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

  const mobile = await customerPage(browser, svc, 43, `/showtimes/${id}`, phone);
  await mobile.locator('button.seat[data-code="D5"]').click();
  await mobile.locator('button.seat[data-code="D6"]').click();
  await shot(mobile, 'phone-seat-map');
  await mobile.screenshot({ path: `${out}/phone-seat-map-full.png`, fullPage: true });

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
