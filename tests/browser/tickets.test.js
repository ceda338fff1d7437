// Tickets and the door in a real Chromium: a customer buys, finds the booking under "My
// bookings" and sees its tickets' QR codes (loaded, one per seat, printable one per page);
// door staff open /door, choose the showtime, and a ticket typed as a keyboard-wedge
// scanner types it (the code, then Enter) is ADMITTED once and REFUSED the second time.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { customerPage, done, launch, startService, watch, checkout } from './harness.js';

const STEP_MS = 15000;
const hall = [{ row: 'A', seats: 8, category: 'standard' }];

describe('tickets and the door', () => {
  let svc;
  let browser;
  before(async () => { svc = await startService(); browser = await launch(); });
  after(async () => { await browser?.close(); await svc?.stop(); });

  test('buy, My bookings, the QR codes; the door admits a scanned ticket once', async () => {
    const id = await svc.createShowtime(hall);
    const page = await customerPage(browser, svc, 301, `/showtimes/${id}`);
    for (const code of ['A3', 'A4']) await page.locator(`button.seat[data-code="${code}"]`).click();
    await page.getByRole('button', { name: /^Hold 2 seats$/ }).click();
    await checkout(page);
    await page.waitForURL((u) => u.href.startsWith(`${svc.gatewayUrl}/pay/`), { timeout: STEP_MS });
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL((u) => u.href.startsWith(`${svc.url}/#/bookings/`), { timeout: STEP_MS });

    // My bookings lists it; its page shows a loaded QR code per seat.
    await page.getByRole('link', { name: 'My bookings' }).click();
    const entry = page.locator('.bookings .card');
    await entry.first().waitFor({ timeout: STEP_MS });
    assert.equal(await entry.count(), 1);
    assert.match(await entry.first().textContent(), /The Browser Test.*Seats A3, A4/s);
    await entry.first().getByRole('link').click();
    await page.waitForFunction(() => document.querySelectorAll('.ticket img').length === 2
      && [...document.querySelectorAll('.ticket img')].every((i) => i.complete && i.naturalWidth > 0), null, { timeout: STEP_MS });
    const codes = await page.locator('.ticket-code').allTextContents();
    assert.equal(codes.length, 2);
    assert.deepEqual(await page.locator('.ticket-seat').allTextContents(), ['Seat A3', 'Seat A4']);
    // Printed: one ticket per page, without the site's header.
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.locator('header.top').isVisible(), false);
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('.ticket')).breakAfter), 'page');
    await page.emulateMedia({ media: 'screen' });

    // The door: a door token, the showtime, a scanner typing the code and Enter.
    const context = await browser.newContext();
    const door = watch(await context.newPage());
    await door.goto(`${svc.url}/door#token=${svc.token(900, false, true)}`);
    await door.getByRole('link', { name: 'The Browser Test' }).first().click();
    const field = door.getByLabel('Ticket code');
    await field.waitFor({ timeout: STEP_MS });
    await door.waitForFunction(() => /0 admitted of 2 sold/.test(document.getElementById('count')?.textContent || ''), null, { timeout: STEP_MS });
    await field.pressSequentially(codes[0]);
    await field.press('Enter');
    await door.waitForFunction(() => document.getElementById('result').dataset.result === 'admitted', null, { timeout: STEP_MS });
    assert.match(await door.locator('#result').textContent(), /ADMITTED.*Seat A3/s);
    await door.waitForFunction(() => /1 admitted of 2 sold/.test(document.getElementById('count').textContent), null, { timeout: STEP_MS });
    // The same ticket again: refused, saying when it was admitted; the field kept focus.
    await field.pressSequentially(codes[0]);
    await field.press('Enter');
    await door.waitForFunction(() => document.getElementById('result').dataset.result === 'refused', null, { timeout: STEP_MS });
    assert.match(await door.locator('#result').textContent(), /REFUSED.*Seat A3.*Already admitted/s);
    // A forged code and a burst of scans: answered in order, the last scans listed.
    const forged = `${codes[1].slice(0, -1)}${codes[1].endsWith('A') ? 'B' : 'A'}`;
    for (const c of [forged, codes[1], codes[1]]) {
      await field.pressSequentially(c);
      await field.press('Enter');
    }
    await door.waitForFunction(() => document.querySelectorAll('#recent li').length === 5, null, { timeout: STEP_MS });
    const recent = await door.locator('#recent li').allTextContents();
    assert.match(recent[0], /^REFUSED Seat A4 · Already admitted/);
    assert.match(recent[1], /^ADMITTED Seat A4/);
    assert.match(recent[2], /^REFUSED Not a ticket of this cinema/);
    assert.equal(await door.evaluate(() => document.activeElement.id), 'code');
    await done(page, door);
  });
});
