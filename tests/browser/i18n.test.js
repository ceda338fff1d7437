// The page in English, French and German (web/i18n.js). Without a browser: every catalogue
// has the English keys, the same {values} in each text and the plural forms its language
// needs; every key the code names exists, and every key is used. In Chromium, every page and
// state in each language: no key missing, no English text left where the language has its
// own, no {value} left unfilled, no "null", "undefined" or "NaN"; dates and money in the
// language's own forms, in the cinema's zone; axe finds nothing serious; the switch in the
// header changes the language and keeps it. Each state's screenshot is written to
// build/screenshots/desktop/ (BOXOFFICE_SCREENSHOTS elsewhere).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { customerPage, done, launch, seriousViolations, startService, watch } from './harness.js';

const WEB = resolve(dirname(fileURLToPath(import.meta.url)), '../../web');
const LANGUAGES = ['en', 'fr', 'de'];
const PARTS = ['', 'admin-', 'door-'];
const STEP_MS = 15000;
// Each page and state is written here as the test sees it (1280 × 720, each language).
const SHOTS = process.env.BOXOFFICE_SCREENSHOTS || resolve(dirname(fileURLToPath(import.meta.url)), '../../build/screenshots/desktop');
// Words of English that neither French nor German use, and the test's data that has them.
const ENGLISH_WORDS = /\b(the|your|you|seats?|and|choose|hold|with|this|from|to|of|is|are|was|not)\b/gi;
const DATA = ['The Browser Test', 'Test Cinema', 'Screen 1', 'Dune: Part Three', 'Odeon Leicester Square'];

// A catalogue module, imported from its text (web/ has no package.json saying "module").
async function catalogue(part, lang) {
  const source = readFileSync(join(WEB, `strings-${part}${lang}.js`), 'utf8');
  return (await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`)).default;
}
const placeholders = (v) => new Set([...(typeof v === 'object' ? Object.values(v).join(' ') : v).matchAll(/\{(\w+)\}/g)].map((m) => m[1]));

describe('the catalogues', () => {
  test('every language has the English keys, the same {values} in each, and its plural forms', async () => {
    const problems = [];
    for (const part of PARTS) {
      const en = await catalogue(part, 'en');
      assert.ok(Object.keys(en).length > 0);
      for (const lang of LANGUAGES) {
        const c = await catalogue(part, lang);
        for (const k of Object.keys(en)) if (!Object.hasOwn(c, k)) problems.push(`${lang}: no ${k}`);
        for (const k of Object.keys(c)) if (!Object.hasOwn(en, k)) problems.push(`${lang}: ${k} is not in English`);
        for (const [k, v] of Object.entries(c)) {
          if (!Object.hasOwn(en, k)) continue;
          const want = [...placeholders(en[k])].sort().join();
          const got = [...placeholders(v)].sort().join();
          if (want !== got) problems.push(`${lang} ${k}: {${got}} where English has {${want}}`);
          if (typeof en[k] === 'object' || typeof v === 'object') {
            if (typeof v !== 'object' || typeof en[k] !== 'object') { problems.push(`${lang} ${k}: plural in one language only`); continue; }
            for (const form of new Intl.PluralRules(lang).resolvedOptions().pluralCategories) {
              if (form !== 'many' && !Object.hasOwn(v, form)) problems.push(`${lang} ${k}: no "${form}" form`);
            }
            if (!/\{n\}/.test(Object.values(en[k]).join()) && !Object.hasOwn(en[k], 'other')) problems.push(`${k}: no "other"`);
          } else if (!v.trim()) problems.push(`${lang} ${k}: empty`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('every key the code names exists, and every key is used', async () => {
    const keys = new Set();
    for (const part of PARTS) for (const k of Object.keys(await catalogue(part, 'en'))) keys.add(k);
    const code = readdirSync(WEB).filter((f) => /\.(js|html)$/.test(f) && !f.startsWith('strings-') && f !== 'i18n.js')
      .map((f) => [f, readFileSync(join(WEB, f), 'utf8')]);
    const named = [];
    for (const [file, text] of code) {
      for (const m of text.matchAll(/\bt(?:n)?\(\s*'([^']+)'/g)) named.push([file, m[1]]);
      for (const m of text.matchAll(/\bt\([^'()]*\?\s*'([^']+)'\s*:\s*'([^']+)'/g)) named.push([file, m[1]], [file, m[2]]);
      for (const m of text.matchAll(/data-i18n(?:-label)?="([^"]+)"/g)) named.push([file, m[1]]);
    }
    assert.ok(named.length > 200, `the scan found the code's keys (${named.length})`);
    assert.deepEqual(named.filter(([, k]) => !keys.has(k)).map(([f, k]) => `${f}: ${k}`), [], 'named but not in the catalogue');
    const all = code.map(([, text]) => text).join('\n');
    assert.deepEqual([...keys].filter((k) => !all.includes(`'${k}'`) && !all.includes(`"${k}"`)), [], 'in the catalogue but never used');
  });
});

// What a page shows a reader: its text and the labels a screen reader says.
function shown(page) {
  return page.evaluate(() => {
    const parts = [document.title, document.body.innerText];
    for (const e of document.querySelectorAll('[aria-label], [title], [alt], [placeholder]')) {
      for (const a of ['aria-label', 'title', 'alt', 'placeholder']) if (e.hasAttribute(a)) parts.push(e.getAttribute(a));
    }
    return { text: parts.join('\n'), missing: document.documentElement.dataset.missingStrings || '', lang: document.documentElement.lang };
  });
}

describe('every page in each language', () => {
  let svc;
  let browser;
  let english;   // fixed English fragments of texts that other languages say otherwise, by language
  before(async () => {
    svc = await startService();
    browser = await launch();
    mkdirSync(SHOTS, { recursive: true });
    english = {};
    for (const lang of LANGUAGES) {
      const fragments = new Set();
      for (const part of PARTS) {
        const en = await catalogue(part, 'en');
        const other = await catalogue(part, lang);
        for (const [k, v] of Object.entries(en)) {
          const forms = typeof v === 'object' ? Object.values(v) : [v];
          const theirs = JSON.stringify(other[k] ?? '');
          for (const form of forms) {
            for (const piece of form.split(/\{\w+\}/)) {
              const fixed = piece.trim();
              // Long enough to be a phrase, and not said the same way in the language.
              if (fixed.length >= 10 && !theirs.includes(fixed)) fragments.add(fixed);
            }
          }
        }
      }
      english[lang] = [...fragments];
    }
  });
  after(async () => { await browser?.close(); await svc?.stop(); });

  async function check(page, lang, where, problems) {
    await page.screenshot({ path: `${SHOTS}/${lang}-${where.replace(/\s+/g, '-')}.png` });
    // axe on every page and state, in every language (a longer word may break a layout).
    for (const v of await seriousViolations(page)) problems.push(`${lang} ${where}: axe ${v}`);
    const { text, missing, lang: htmlLang } = await shown(page);
    if (htmlLang !== lang) problems.push(`${lang} ${where}: <html lang="${htmlLang}">`);
    if (missing) problems.push(`${lang} ${where}: missing ${missing}`);
    for (const m of text.matchAll(/\b(null|undefined|NaN)\b/g)) problems.push(`${lang} ${where}: "${m[0]}"`);
    for (const m of text.matchAll(/\{\w+\}/g)) problems.push(`${lang} ${where}: ${m[0]} left unfilled`);
    if (lang !== 'en') {
      for (const f of english[lang]) if (text.includes(f)) problems.push(`${lang} ${where}: English "${f}"`);
      // A text written in the code instead of a catalogue: English words in what is left
      // once the test's own data (titles, names) is taken out.
      let rest = text;
      for (const data of DATA) rest = rest.split(data).join('');
      for (const m of rest.matchAll(ENGLISH_WORDS)) problems.push(`${lang} ${where}: English word "${m[0]}" in "${rest.slice(Math.max(0, m.index - 30), m.index + 30).replace(/\s+/g, ' ')}"`);
    }
  }

  for (const [lang, locale] of [['en', 'en-GB'], ['fr', 'fr-FR'], ['de', 'de-DE']]) {
    test(`${lang}: list, seat map, selection, hold, booking, bookings, tickets, admin, door`, async () => {
      const problems = [];
      const id = await svc.createShowtime([
        { row: 'A', seats: 8, category: 'standard', aisles: [4], accessible: [8] },
        { row: 'B', seats: 8, category: 'premium' },
      ], { standard: { amount: 1250, currency: 'EUR' }, premium: { amount: 1800, currency: 'EUR' } }, { timeZone: 'Europe/Paris' });
      const customer = 1500 + LANGUAGES.indexOf(lang);
      const page = await customerPage(browser, svc, customer, '/', { locale, timezoneId: 'America/New_York' });
      await page.locator('.card').first().waitFor({ timeout: STEP_MS });
      await check(page, lang, 'showtimes', problems);
      await page.goto(`${svc.url}/#/showtimes/${id}`);
      await page.locator('button.seat[data-code="A1"]').waitFor({ timeout: STEP_MS });
      await check(page, lang, 'seat map', problems);
      await page.locator('button.seat[data-code="A2"]').click();
      await page.locator('button.seat[data-code="A3"]').click();
      await check(page, lang, 'selection', problems);
      // Money in the language's form: €25.00, 25,00 €, 25,00 €.
      const panel = (await page.locator('.panel').innerText()).replace(/\s+/g, ' ');
      assert.match(panel, { en: /€25\.00/, fr: /25,00 €/, de: /25,00 €/ }[lang], panel);
      await page.locator('.panel button.primary').click();
      await page.locator('.countdown').waitFor({ timeout: STEP_MS });
      await check(page, lang, 'hold', problems);
      await page.locator('.panel button.primary').click();  // checkout: the order's summary
      await page.locator('#order-email').fill('ana@example.com');
      await check(page, lang, 'order summary', problems);
      await page.locator('.order button[type="submit"]').click();
      await page.waitForURL((u) => u.href.startsWith(`${svc.gatewayUrl}/pay/`), { timeout: STEP_MS });
      await page.getByRole('button', { name: 'Pay' }).click();  // the gateway's page
      await page.waitForURL((u) => u.href.startsWith(`${svc.url}/#/bookings/`), { timeout: STEP_MS });
      await page.waitForFunction(() => document.querySelector('.booking-status .status')?.dataset.status === 'CONFIRMED', null, { timeout: STEP_MS });
      await page.locator('.ticket').first().waitFor({ timeout: STEP_MS });
      await check(page, lang, 'booking', problems);
      // The start on the cinema's clock (Paris), in the language's words, whatever the browser's zone.
      const info = await page.locator('.sub').innerText();
      const start = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', timeZone: 'Europe/Paris' })
        .format(new Date(await page.evaluate(() => document.querySelector('.sub time').getAttribute('datetime'))));
      assert.ok(info.replace(/\s+/g, ' ').includes(start.replace(/\s+/g, ' ')), `${info} shows ${start}`);
      await page.goto(`${svc.url}/#/bookings`);
      await page.locator('.card').first().waitFor({ timeout: STEP_MS });
      await check(page, lang, 'my bookings', problems);
      await done(page);

      const admin = watch(await (await browser.newContext({ locale })).newPage());
      await admin.goto(`${svc.url}/#/admin?token=${svc.token(1, true)}`);
      await admin.locator('.showtime-sales table').waitFor({ timeout: STEP_MS });
      await check(admin, lang, 'admin', problems);
      await admin.goto(`${svc.url}/#/admin/showtimes/${id}`);
      await admin.locator('#h-sales').waitFor({ timeout: STEP_MS });
      await admin.locator('.cancel-box button').first().click();
      await check(admin, lang, 'admin showtime', problems);
      await admin.goto(`${svc.url}/door#${id}`);
      await admin.locator('#code').waitFor({ timeout: STEP_MS });
      await admin.locator('#code').fill('not-a-ticket');
      await admin.locator('#code').press('Enter');
      await admin.locator('#result[data-result="refused"]').waitFor({ timeout: STEP_MS });
      await check(admin, lang, 'door', problems);
      await done(admin);
      assert.deepEqual(problems, []);
    });
  }

  test('the switch in the header: French in a German browser, kept on the next visit', async () => {
    const page = await customerPage(browser, svc, 1510, '/', { locale: 'de-DE' });
    await page.locator('.card').first().waitFor({ timeout: STEP_MS });
    assert.equal(await page.locator('h1').textContent(), 'Vorstellungen');
    await Promise.all([page.waitForEvent('load'), page.getByLabel('Sprache').selectOption('fr')]);
    await page.locator('.card').first().waitFor({ timeout: STEP_MS });
    assert.equal(await page.locator('h1').textContent(), 'Séances');
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'fr');
    await page.goto(`${page.url().split('#')[0]}#/bookings`);
    await page.getByRole('heading', { name: 'Mes commandes' }).waitFor({ timeout: STEP_MS });
    await done(page);
  });
});
